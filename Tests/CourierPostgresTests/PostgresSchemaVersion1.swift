import Foundation
@testable import CourierPostgres

/// The schema as version 1 of the store created it (before split leases), kept as a fixture so
/// that the migration to the current version is tested from what real databases hold.
enum PostgresSchemaVersion1 {
    static let statements = [
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

    /// Version 1's `courier_lease`: it counted a host's leases, one connection each.
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
                PERFORM pg_advisory_xact_lock(\(PostgresQueueStore.advisoryClass), hashtext(candidate.host));
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

}
