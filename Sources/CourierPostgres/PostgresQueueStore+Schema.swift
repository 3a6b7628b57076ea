import Courier
import Foundation

extension PostgresQueueStore {
    /// The schema version this Courier writes and the newest it reads.
    public static let schemaVersion = 1

    /// The schema, version 1. Every name starts with `courier_`.
    ///
    /// - `courier_schema`: one row, the version.
    /// - `courier_items`: one row per item. `item` is the item as JSON (the journal's encoding of
    ///   ``DownloadQueue/Item``); `state` is `queued`, `leased`, `completed`, `failed`, `paused` or
    ///   `cancelled`; a `leased` row names its `worker` and `lease_expires`; `token` is the fencing
    ///   token, raised by each lease and never lowered (a trigger refuses that).
    static let schemaStatements = [
        "CREATE TABLE courier_schema (version integer NOT NULL, created timestamptz NOT NULL DEFAULT now())",
        "INSERT INTO courier_schema (version) VALUES (1)",
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
    /// 1. The best runnable row whose host looks to have room, taken with `FOR UPDATE SKIP
    ///    LOCKED`: workers skip each other's rows instead of waiting.
    /// 2. The host's advisory lock, which every lease of that host takes, then its unexpired
    ///    leases counted again: the first count may be stale, this one cannot be, so two workers
    ///    never both take a host's last slot.
    /// 3. Room: the row becomes `leased` with `token + 1`. No room (another worker just took the
    ///    slot): the next round's first count sees that lease and picks another host's row.
    static let leaseFunction = """
        CREATE FUNCTION courier_lease(p_worker text, p_seconds float8, p_cap integer)
        RETURNS TABLE (id text, token bigint, expires float8, item text, received bigint, resume_record text)
        LANGUAGE plpgsql VOLATILE AS $$
        #variable_conflict use_column
        DECLARE
            candidate record;
            held bigint;
        BEGIN
            FOR round IN 1..8 LOOP
                SELECT i.id, i.host INTO candidate FROM courier_items i
                WHERE (i.state = 'queued' OR (i.state = 'leased' AND i.lease_expires < now()))
                  AND (SELECT count(*) FROM courier_items l
                       WHERE l.host = i.host AND l.state = 'leased' AND l.lease_expires >= now()) < p_cap
                ORDER BY i.priority DESC, i.sequence
                LIMIT 1
                FOR UPDATE OF i SKIP LOCKED;
                IF NOT FOUND THEN
                    RETURN;
                END IF;
                PERFORM pg_advisory_xact_lock(\(advisoryClass), hashtext(candidate.host));
                SELECT count(*) INTO held FROM courier_items l
                WHERE l.host = candidate.host AND l.state = 'leased' AND l.lease_expires >= now() AND l.id <> candidate.id;
                IF held < p_cap THEN
                    RETURN QUERY
                    UPDATE courier_items u
                    SET state = 'leased', worker = p_worker, token = u.token + 1,
                        lease_expires = now() + make_interval(secs => p_seconds), updated = now()
                    WHERE u.id = candidate.id
                    RETURNING u.id, u.token, extract(epoch FROM u.lease_expires)::float8, u.item, u.received,
                        encode(u.resume_record, 'hex');
                    RETURN;
                END IF;
            END LOOP;
        END
        $$
        """

    /// Creates the schema when the database has none, and checks its version otherwise: a newer
    /// one, or a `courier_schema` table without its row, is
    /// ``CourierError/Code-swift.struct/storeIncompatible``. Two stores opening an empty database
    /// at once create it once (an advisory lock orders them).
    static func prepareSchema(on connection: PostgresConnection) throws(CourierError) {
        let created: Bool
        do throws(PostgresConnection.Failure) {
            created = try connection.session { (session: PostgresConnection.Session) throws(PostgresConnection.Failure) -> Bool in
                _ = try session.execute("BEGIN")
                do throws(PostgresConnection.Failure) {
                    _ = try session.execute("SELECT pg_advisory_xact_lock(\(advisoryClass), 0)")
                    let exists = try session.execute("SELECT to_regclass('courier_schema') IS NOT NULL")
                    if exists.first?.first == "t" {
                        _ = try session.execute("COMMIT")
                        return false
                    }
                    for statement in schemaStatements { _ = try session.execute(statement) }
                    _ = try session.execute("COMMIT")
                    return true
                } catch {
                    _ = try? session.execute("ROLLBACK")
                    throw error
                }
            }
        } catch {
            throw error.error
        }
        if !created { try checkVersion(on: connection) }
    }

    private static func checkVersion(on connection: PostgresConnection) throws(CourierError) {
        let rows: PostgresConnection.Rows
        do throws(PostgresConnection.Failure) {
            rows = try connection.execute("SELECT version FROM courier_schema")
        } catch {
            throw error.error
        }
        guard rows.count == 1, let text = rows[0].first ?? nil, let version = Int(text) else {
            throw CourierError(
                code: .storeIncompatible,
                message:
                    "the database's courier_schema table holds \(rows.count) rows where the store writes one with its version: it was edited or damaged; restore it or drop the courier_ tables"
            )
        }
        guard version <= schemaVersion else {
            throw CourierError(
                code: .storeIncompatible,
                message:
                    "the database's Courier schema is version \(version), newer than the \(schemaVersion) this Courier reads: use a newer Courier (nothing was changed)"
            )
        }
    }

    /// The first key of the store's advisory locks (`pg_advisory_xact_lock(class, key)`): 0 for
    /// creating the schema, a host's hash for counting its leases.
    static let advisoryClass: Int32 = 0x436F_7572  // "Cour"
}
