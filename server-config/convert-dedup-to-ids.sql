-- Converts an installed, unpartitioned processed_events to the layout DEDUP_PARTITIONING=id installs
-- (V12__processed_events_by_id.sql), keeping every record: each is copied to its place in the new table (a v7 ID to
-- its day's partition, any other version to processed_events_other) and the old table is dropped.
-- Run as the table's owner (DB_OWNER_USER), with psql, on a schema at version 12 or later, with the consumers
-- stopped (an instance reads the layout when it starts; start them again after it):
--     psql -v ON_ERROR_STOP=1 -U <owner> -d <database> -f server-config/convert-dedup-to-ids.sql
-- One transaction: if anything fails, nothing changed. It copies every row, so it takes time per row (operations.md
-- says how much); the table's expired rows can be purged first to shorten it.

BEGIN;
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
-- Nothing may write to the old table while its rows are copied.
LOCK TABLE processed_events IN EXCLUSIVE MODE;
ALTER TABLE processed_events RENAME TO processed_events_unpartitioned;
ALTER INDEX processed_events_pkey RENAME TO processed_events_unpartitioned_pkey;
ALTER INDEX IF EXISTS processed_events_processed_at RENAME TO processed_events_unpartitioned_processed_at;
SELECT processed_events_create_by_id();
-- A partition for every day of the v7 records from two months back (older ones go to the default sub-partition, purged
-- row by row; an expired day's partition is dropped by the next purge), and the days ahead.
SELECT count(*) FILTER (WHERE processed_events_day_partition(day::date)) AS day_partitions
  FROM generate_series(
           greatest(coalesce((SELECT min(processed_events_v7_day(event_id)) FROM processed_events_unpartitioned
                               WHERE get_byte(uuid_send(event_id), 6) >> 4 = 7),
                             (now() AT TIME ZONE 'UTC')::date),
                    (now() AT TIME ZONE 'UTC')::date - 62),
           (now() AT TIME ZONE 'UTC')::date,
           interval '1 day') AS days (day);
SELECT processed_events_days_ahead();
INSERT INTO processed_events (event_id, processed_at, fingerprint, event_day, kind, id_version)
SELECT event_id, processed_at, fingerprint, event_day, kind, get_byte(uuid_send(event_id), 6) >> 4
  FROM processed_events_unpartitioned;
DROP TABLE processed_events_unpartitioned;
COMMIT;
ANALYZE processed_events;
