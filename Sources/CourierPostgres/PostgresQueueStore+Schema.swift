import Courier
import Foundation

extension PostgresQueueStore {
    /// The schema version this Courier writes and the newest it reads. Version 2 (issue 35's split
    /// leases) added `split_connections` and `connections`; a version 1 database is migrated when
    /// a store opens it (``migrationStatements``).
    public static let schemaVersion = 2

    /// The schema, version 2. Every name starts with `courier_`.
    ///
    /// - `courier_schema`: one row, the version.
    /// - `courier_items`: one row per item. `item` is the item as JSON (the journal's encoding of
    ///   ``DownloadQueue/Item``); `state` is `queued`, `leased`, `completed`, `failed`, `paused` or
    ///   `cancelled`; a `leased` row names its `worker` and `lease_expires`; `token` is the fencing
    ///   token, raised by each lease and never lowered (a trigger refuses that);
    ///   `split_connections` is the most connections the item's split asks for, and `connections`
    ///   what its current lease holds on its `host` (what the per-host cap sums).
    static let schemaStatements = [
        "CREATE TABLE courier_schema (version integer NOT NULL, created timestamptz NOT NULL DEFAULT now())",
        "INSERT INTO courier_schema (version) VALUES (\(schemaVersion))",
        "CREATE SEQUENCE courier_item_sequence",
        """
        CREATE TABLE courier_items (
            id text PRIMARY KEY,
            sequence bigint NOT NULL,
            priority integer NOT NULL,
            host text NOT NULL,
            item text NOT NULL,
            state text NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'leased', 'completed', 'failed', 'paused', 'cancelled')),
            worker text,
            token bigint NOT NULL DEFAULT 0 CHECK (token >= 0),
            lease_expires timestamptz,
            received bigint NOT NULL DEFAULT 0 CHECK (received >= 0),
            resume_record bytea,
            failure text,
            file text,
            updated timestamptz NOT NULL DEFAULT now(),
            split_connections integer NOT NULL DEFAULT 1 CHECK (split_connections BETWEEN 1 AND \(DownloadSplit.maximumConnections)),
            connections integer NOT NULL DEFAULT 1 CHECK (connections >= 1),
            CONSTRAINT courier_items_lease CHECK (state <> 'leased' OR (worker IS NOT NULL AND lease_expires IS NOT NULL))
        )
        """,
        "CREATE INDEX courier_items_runnable ON courier_items (priority DESC, sequence) WHERE state IN ('queued', 'leased')",
        "CREATE INDEX courier_items_leased_host ON courier_items (host) WHERE state = 'leased'",
        """
        CREATE FUNCTION courier_items_token_check() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.token < OLD.token THEN
                RAISE EXCEPTION 'courier_items.token of item % may not go down (% to %): it is the fencing token',
                    OLD.id, OLD.token, NEW.token;
            END IF;
            RETURN NEW;
        END
        $$
        """,
        """
        CREATE TRIGGER courier_items_token BEFORE UPDATE OF token ON courier_items
            FOR EACH ROW EXECUTE FUNCTION courier_items_token_check()
        """,
        leaseFunction,
    ]

    /// `courier_lease(worker, seconds, cap)`: the lease as one server-side call, so a lease costs
    /// one round trip instead of six. The steps, each a statement of its own (a `VOLATILE`
    /// function's statements each see what other transactions committed before it began):
    ///
    /// 1. The best runnable row whose host looks to have a connection free (the `connections` of
    ///    its unexpired leases summed below `cap`), taken with `FOR UPDATE SKIP LOCKED`: workers
    ///    skip each other's rows instead of waiting.
    /// 2. The host's advisory lock, which every lease of that host takes, then the connections of
    ///    its unexpired leases summed again: the first sum may be stale, this one cannot be, so two
    ///    workers never both take a host's last connections.
    /// 3. Room: the row becomes `leased` with `token + 1`, holding `least(split_connections,
    ///    cap - held)` connections — `DownloadQueue.grantedConnections(wanting:hostConnections:perHost:)`,
    ///    the one-process queue's rule, here because it must be decided inside the transaction (the
    ///    store's tests check the two agree). No room (another worker just took the last
    ///    connection): the next round's first sum sees that lease and picks another host's row.
    static let leaseFunction = """
        CREATE FUNCTION courier_lease(p_worker text, p_seconds float8, p_cap integer)
        RETURNS TABLE (id text, token bigint, expires float8, item text, received bigint, resume_record text, connections integer)
        LANGUAGE plpgsql VOLATILE AS $$
        #variable_conflict use_column
        DECLARE
            candidate record;
            held bigint;
        BEGIN
            FOR round IN 1..8 LOOP
                SELECT i.id, i.host, i.split_connections INTO candidate FROM courier_items i
                WHERE (i.state = 'queued' OR (i.state = 'leased' AND i.lease_expires < now()))
                  AND (SELECT coalesce(sum(l.connections), 0) FROM courier_items l
                       WHERE l.host = i.host AND l.state = 'leased' AND l.lease_expires >= now()) < p_cap
                ORDER BY i.priority DESC, i.sequence
                LIMIT 1
                FOR UPDATE OF i SKIP LOCKED;
                IF NOT FOUND THEN
                    RETURN;
                END IF;
                PERFORM pg_advisory_xact_lock(\(advisoryClass), hashtext(candidate.host));
                SELECT coalesce(sum(l.connections), 0) INTO held FROM courier_items l
                WHERE l.host = candidate.host AND l.state = 'leased' AND l.lease_expires >= now() AND l.id <> candidate.id;
                IF held < p_cap THEN
                    RETURN QUERY
                    UPDATE courier_items u
                    SET state = 'leased', worker = p_worker, token = u.token + 1,
                        lease_expires = now() + make_interval(secs => p_seconds), updated = now(),
                        connections = greatest(1, least(candidate.split_connections, p_cap - held))
                    WHERE u.id = candidate.id
                    RETURNING u.id, u.token, extract(epoch FROM u.lease_expires)::float8, u.item, u.received,
                        encode(u.resume_record, 'hex'), u.connections;
                    RETURN;
                END IF;
            END LOOP;
        END
        $$
        """

    /// The statements that take a version 1 schema to version 2, in the transaction that opens it:
    /// the two connection columns (a version 1 lease was fetched unsplit: it holds one), the lease
    /// function that sums them, and the version. Each row's `split_connections` is then filled
    /// from its item by ``DownloadQueue`` itself (``migrate(_:)``), not by a second reading of
    /// the split in SQL.
    static let migrationStatements = [
        """
        ALTER TABLE courier_items
            ADD COLUMN split_connections integer NOT NULL DEFAULT 1
                CHECK (split_connections BETWEEN 1 AND \(DownloadSplit.maximumConnections)),
            ADD COLUMN connections integer NOT NULL DEFAULT 1 CHECK (connections >= 1)
        """,
        "DROP FUNCTION courier_lease(text, float8, integer)",
        leaseFunction,
        "UPDATE courier_schema SET version = \(schemaVersion)",
    ]

    /// Creates the schema when the database has none, migrates a version 1 one, and checks the
    /// version otherwise: a newer one, or a `courier_schema` table without its row, is
    /// ``CourierError/Code-swift.struct/storeIncompatible`` and nothing is changed. Two stores
    /// opening a database at once create or migrate it once (an advisory lock orders them).
    static func prepareSchema(on connection: PostgresConnection) throws(CourierError) {
        do throws(PostgresConnection.Failure) {
            try connection.session { (session: PostgresConnection.Session) throws(PostgresConnection.Failure) in
                _ = try session.execute("BEGIN")
                do throws(PostgresConnection.Failure) {
                    _ = try session.execute("SELECT pg_advisory_xact_lock(\(advisoryClass), 0)")
                    let exists = try session.execute("SELECT to_regclass('courier_schema') IS NOT NULL")
                    if exists.first?.first == "t" {
                        let version = try Self.version(in: try session.execute("SELECT version FROM courier_schema"))
                        if version < schemaVersion { try migrate(session) }
                    } else {
                        for statement in schemaStatements { _ = try session.execute(statement) }
                    }
                    _ = try session.execute("COMMIT")
                } catch {
                    _ = try? session.execute("ROLLBACK")
                    throw error
                }
            }
        } catch {
            throw error.error
        }
    }

    /// Takes a version 1 schema to this version (``migrationStatements``), filling each unfinished
    /// row's `split_connections` from its item's split as ``DownloadQueue`` reads it. A row whose
    /// item does not decode keeps 1; a lease meets it and fails it, as before.
    static func migrate(_ session: PostgresConnection.Session) throws(PostgresConnection.Failure) {
        for statement in migrationStatements { _ = try session.execute(statement) }
        let rows = try session.execute(
            "SELECT id, item FROM courier_items WHERE state IN ('queued', 'leased', 'paused') AND item LIKE '%\"split\"%'")
        for row in rows {
            guard let id = row[0], let json = row[1],
                let item = try? JSONDecoder().decode(DownloadQueue.Item.self, from: Data(json.utf8))
            else { continue }
            let wanted = DownloadQueue.connectionsWanted(by: item.split)
            guard wanted > 1 else { continue }
            _ = try session.execute("UPDATE courier_items SET split_connections = $2::int WHERE id = $1", [id, String(wanted)])
        }
    }

    /// The version in `courier_schema`'s rows: one row, not newer than this Courier's.
    private static func version(in rows: PostgresConnection.Rows) throws(PostgresConnection.Failure) -> Int {
        guard rows.count == 1, let text = rows[0].first ?? nil, let version = Int(text) else {
            throw PostgresConnection.Failure(
                sqlState: nil,
                error: CourierError(
                    code: .storeIncompatible,
                    message:
                        "the database's courier_schema table holds \(rows.count) rows where the store writes one with its version: it was edited or damaged; restore it or drop the courier_ tables"
                ))
        }
        guard version <= schemaVersion else {
            throw PostgresConnection.Failure(
                sqlState: nil,
                error: CourierError(
                    code: .storeIncompatible,
                    message:
                        "the database's Courier schema is version \(version), newer than the \(schemaVersion) this Courier reads: use a newer Courier (nothing was changed)"
                ))
        }
        return version
    }

    /// The first key of the store's advisory locks (`pg_advisory_xact_lock(class, key)`): 0 for
    /// creating the schema, a host's hash for counting its leases.
    static let advisoryClass: Int32 = 0x436F_7572  // "Cour"
}
