-- The table by week is retired: DEDUP_PARTITIONING is none or id. An installed table by week is converted here to the
-- layout the setting names, keeping every record: each is copied with its ID, time, fingerprint and kind, so that a
-- copy delivered after the conversion finds its original, and each stays as long as that layout keeps a record (none:
-- until its processed_at is a window old; id: until its ID's day is, older v7 days and other versions row by row).
-- One transaction under an exclusive lock: the consumers wait for it (SchemaMigration runs before any delivery), and
-- if anything fails nothing changed. It takes time per row, as server-config/convert-dedup-to-ids.sql does.
--
-- Kept for an instance of the version before that is still running during the upgrade: the column event_day (it
-- writes it) and processed_event_claim (it calls it before every insert; it looks the ID up in any layout). A later
-- migration drops both. Every other function of the week layout goes, with the week tables a purge left detached.
DO $$
DECLARE
    detached record;
BEGIN
    IF '${dedupLayout}' NOT IN ('none', 'id') THEN
        RAISE EXCEPTION 'DEDUP_PARTITIONING=% is neither none nor id', '${dedupLayout}';
    END IF;
    IF EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = 'processed_events'::regclass AND partstrat = 'r') THEN
        LOCK TABLE processed_events IN EXCLUSIVE MODE;
        ALTER TABLE processed_events RENAME TO processed_events_by_week;
        ALTER INDEX processed_events_pkey RENAME TO processed_events_by_week_pkey;
        ALTER INDEX IF EXISTS processed_events_processed_at RENAME TO processed_events_by_week_processed_at;
        IF '${dedupLayout}' = 'id' THEN
            PERFORM processed_events_create_by_id();
            -- A partition for every day of the v7 records from two months back (older ones go to the default
            -- sub-partition, purged row by row), and the days ahead.
            PERFORM processed_events_day_partition(day::date)
              FROM generate_series(
                       greatest(coalesce((SELECT min(processed_events_v7_day(event_id)) FROM processed_events_by_week
                                           WHERE get_byte(uuid_send(event_id), 6) >> 4 = 7),
                                         (now() AT TIME ZONE 'UTC')::date),
                                (now() AT TIME ZONE 'UTC')::date - 62),
                       (now() AT TIME ZONE 'UTC')::date,
                       interval '1 day') AS days (day);
            PERFORM processed_events_days_ahead();
        ELSE
            -- The unpartitioned table as V1 to V12 leave it.
            CREATE TABLE processed_events (
                event_id     uuid        NOT NULL,
                processed_at timestamptz NOT NULL DEFAULT now(),
                fingerprint  bytea,
                event_day    date        NOT NULL DEFAULT DATE '1970-01-01',
                kind         text        NOT NULL DEFAULT 'payment',
                id_version   smallint,
                CONSTRAINT processed_events_pkey PRIMARY KEY (event_id),
                CONSTRAINT processed_events_kind_format CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$')
            );
            CREATE INDEX processed_events_processed_at ON processed_events (processed_at);
        END IF;
        -- The claim kept an ID to one row across weeks; should two rows of one ID exist all the same, the later one
        -- is kept, the longer-lived.
        INSERT INTO processed_events (event_id, processed_at, fingerprint, kind, id_version)
        SELECT DISTINCT ON (event_id) event_id, processed_at, fingerprint, kind, get_byte(uuid_send(event_id), 6) >> 4
          FROM processed_events_by_week
         ORDER BY event_id, processed_at DESC;
        DROP TABLE processed_events_by_week;
        ANALYZE processed_events;
        RAISE NOTICE 'processed_events converted from the table by week to DEDUP_PARTITIONING=%', '${dedupLayout}';
    END IF;
    FOR detached IN
        SELECT c.relname AS name FROM pg_class c
         WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
           AND c.relname ~ '^processed_events_p[0-9]{8}$'
           AND NOT EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = c.oid)
    LOOP
        EXECUTE format('DROP TABLE %I', detached.name);
    END LOOP;
END
$$;

DROP FUNCTION processed_events_weeks_ahead();
DROP FUNCTION processed_events_drop_detached();
DROP FUNCTION processed_events_detach_week(text, interval);
DROP FUNCTION processed_events_expired_weeks(interval);
DROP FUNCTION processed_events_partition(date);
DROP FUNCTION processed_events_create_by_week();
