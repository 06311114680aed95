-- Converts an installed, unpartitioned processed_events to the layout DEDUP_PARTITIONING=week installs
-- (V8__processed_events_by_week.sql), keeping every record: the table becomes the partition processed_events_legacy,
-- which the purge empties row by row as before, while new records go to week partitions it drops whole.
-- Run as the table's owner (DB_OWNER_USER), with psql, on a schema at version 8 or later:
--     psql -v ON_ERROR_STOP=1 -U <owner> -d <database> -f server-config/convert-dedup-to-weeks.sql
-- The first part runs beside the consumers (an index built concurrently, a constraint validated without blocking
-- writes); stop the consumers before the second part, a short transaction that touches only the catalog, and start
-- them after it with DEDUP_PARTITIONING=week: an instance reads the layout when it starts.

DO $$
BEGIN
    IF current_user <> (SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = 'processed_events')
    THEN
        RAISE EXCEPTION 'run this as the owner of processed_events, not %', current_user;
    END IF;
    IF EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = 'processed_events'::regclass) THEN
        RAISE EXCEPTION 'processed_events is partitioned already';
    END IF;
END
$$;

-- Part 1, online: the unique key the partitioned table asks of each partition, and a validated constraint that
-- spares ATTACH a scan of every row. Every row of the unpartitioned table has event_day 1970-01-01.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS processed_events_legacy_key ON processed_events (event_id, event_day);
ALTER TABLE processed_events DROP CONSTRAINT IF EXISTS processed_events_legacy_day;
ALTER TABLE processed_events ADD CONSTRAINT processed_events_legacy_day CHECK (event_day < DATE '1970-01-02') NOT VALID;
ALTER TABLE processed_events VALIDATE CONSTRAINT processed_events_legacy_day;

-- Part 2, with the consumers stopped.
BEGIN;
-- Its key on event_id alone gives way to the index of part 1 (as unique: every event_day is the same), which ATTACH
-- then takes as the partition's key instead of building one.
ALTER TABLE processed_events DROP CONSTRAINT processed_events_pkey;
ALTER TABLE processed_events
    ADD CONSTRAINT processed_events_legacy_pkey PRIMARY KEY USING INDEX processed_events_legacy_key;
ALTER TABLE processed_events RENAME TO processed_events_legacy;
ALTER INDEX IF EXISTS processed_events_processed_at RENAME TO processed_events_legacy_processed_at;
SELECT processed_events_create_by_week();
ALTER TABLE processed_events ATTACH PARTITION processed_events_legacy FOR VALUES FROM (MINVALUE) TO ('1970-01-02');
SELECT processed_events_weeks_ahead();
COMMIT;
