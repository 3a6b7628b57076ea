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
    ]

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
