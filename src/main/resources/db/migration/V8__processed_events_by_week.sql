-- The dedup table by week (DEDUP_PARTITIONING=week): retention drops a whole week instead of deleting its rows one by
-- one. PostgreSQL wants the partition key in every unique key, so the key becomes (event_id, event_day); what keeps
-- an event ID unique across days is processed_event_claim below. event_day is the UTC day the event occurred (its
-- occurredAt), or the day it was first processed for an event that does not say; 1970-01-01 means "not placed": every
-- row of the unpartitioned table (a constant default: no rewrite of an installed table). A partition holds a week
-- (Monday to Sunday, UTC), not a day: every delivery's claim looks into every partition, and a look costs per
-- partition (measured on 20,000,000 rows: 0.04 ms with 4 partitions, 0.19 ms with 18, 0.8 ms with 32, where each
-- scan's locks no longer fit PostgreSQL's fast path); a week keeps them few, at the price of records kept up to a week
-- longer than the window.
ALTER TABLE processed_events ADD COLUMN event_day date NOT NULL DEFAULT DATE '1970-01-01';

-- The table by week, its index for the purge and the gauges, and the default partition: rows of a week that has no
-- partition (not created yet, already dropped, or far off by a skewed clock), so that an insert never fails for one.
-- Run by the owner: by this migration, and by server-config/convert-dedup-to-weeks.sql.
CREATE FUNCTION processed_events_create_by_week() RETURNS void
    LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
    CREATE TABLE processed_events (
        event_id     uuid        NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        fingerprint  bytea,
        event_day    date        NOT NULL DEFAULT DATE '1970-01-01',
        CONSTRAINT processed_events_pkey PRIMARY KEY (event_id, event_day)
    ) PARTITION BY RANGE (event_day);
    CREATE INDEX processed_events_processed_at ON processed_events (processed_at);
    CREATE TABLE processed_events_default PARTITION OF processed_events DEFAULT;
END
$$;

-- Installed by week only on an empty table (a new install); an installed table is converted by the owner as
-- operations.md says (server-config/convert-dedup-to-weeks.sql), with the consumers stopped.
DO $$
BEGIN
    IF '${dedupPartitioning}' NOT IN ('none', 'week') THEN
        RAISE EXCEPTION 'DEDUP_PARTITIONING=% is neither none nor week', '${dedupPartitioning}';
    END IF;
    IF '${dedupPartitioning}' = 'week' AND NOT EXISTS (SELECT FROM processed_events) THEN
        DROP TABLE processed_events;
        PERFORM processed_events_create_by_week();
    END IF;
END
$$;

-- Serialises the deliveries of one event ID, then answers whether the ID is new, in any partition. In the partitioned
-- table the unique key covers one day: two deliveries placed on two days (an event without occurredAt processed on
-- either side of midnight, a producer that changed occurredAt, a row of the converted table) would both insert. The
-- lock is the transaction's, so the answer holds until the caller's insert commits or rolls back; plpgsql takes a
-- new snapshot for the SELECT after the lock is granted, so a holder that committed meanwhile is seen. The lock's
-- first key ('dedu') keeps it apart from every other advisory lock of the application.
CREATE FUNCTION processed_event_claim(claimed uuid) RETURNS boolean
    LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1684300917, uuid_hash(claimed));
    RETURN NOT EXISTS (SELECT FROM processed_events WHERE event_id = claimed);
END
$$;

-- Creates the partition of the week (Monday, UTC) that holds the day, unless it exists or the default partition holds
-- rows of that week (they stay there, purged row by row). Named after its Monday. Created apart, then attached:
-- ATTACH locks the parent in SHARE UPDATE EXCLUSIVE mode, which the consumers' inserts do not wait for. Runs as the
-- owner: the application's role may not create tables.
CREATE FUNCTION processed_events_partition(any_day date) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    monday date := date_trunc('week', any_day)::date;
    table_name text := 'processed_events_p' || to_char(monday, 'YYYYMMDD');
BEGIN
    IF to_regclass(table_name) IS NOT NULL THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM processed_events_default WHERE event_day >= monday AND event_day < monday + 7) THEN
        RAISE WARNING 'dedup records of the week of % are in the default partition: no partition of their own', monday;
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE processed_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', table_name);
    EXECUTE format('ALTER TABLE processed_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
        table_name, monday, monday + 7);
    RETURN true;
END
$$;

-- The week partitions whose last moment is a whole window old, oldest first. Every event such a partition can hold
-- occurred before its week ended, so a copy arriving now is older than the window, past the dedup horizon (the window
-- less a day): quarantined as STALE, never judged by a record that is gone.
CREATE FUNCTION processed_events_expired_weeks(keep interval) RETURNS SETOF text
    LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
    SELECT c.relname::text
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'processed_events'::regclass
       AND c.relname ~ '^processed_events_p[0-9]{8}$'
       AND (to_date(substr(c.relname, 19), 'YYYYMMDD') + 7)::timestamp AT TIME ZONE 'UTC' <= now() - keep
     ORDER BY c.relname
$$;

-- Detaches one of those weeks and answers its rows, in a transaction of its own (the caller's): the only lock the
-- consumers wait for, since detaching locks the parent exclusively (the deliveries in flight are waited for and the
-- next ones wait behind it), for a change of the catalog, never longer than lock_timeout (then the next purge tries
-- again). The files go in processed_events_drop_detached, which locks nothing the consumers use (measured: at most
-- 8 ms over the detach; freeing the files may still slow every commit where the file system makes an unlink wait for
-- the disk, performance.md).
-- The rows are PostgreSQL's running count (pg_stat_user_tables): a count(*) of a week would spend seconds of the
-- consumers' CPU. Refuses a week that is not expired (a caller's mistake must not drop records the horizon does not
-- cover). DETACH ... CONCURRENTLY is not allowed beside a default partition.
CREATE FUNCTION processed_events_detach_week(partition_name text, keep interval) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    rows_in bigint;
BEGIN
    IF partition_name NOT IN (SELECT processed_events_expired_weeks(keep)) OR keep < interval '1 day' THEN
        RAISE EXCEPTION '% is not a week partition of processed_events past a window of %', partition_name, keep;
    END IF;
    SELECT n_live_tup INTO rows_in FROM pg_stat_user_tables WHERE relid = partition_name::regclass;
    PERFORM set_config('lock_timeout', '2s', true);
    EXECUTE format('ALTER TABLE processed_events DETACH PARTITION %I', partition_name);
    RETURN coalesce(rows_in, 0);
END
$$;

-- Drops the week tables detached above (one a purge detached and did not get to drop too).
CREATE FUNCTION processed_events_drop_detached() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    detached record;
    dropped integer := 0;
BEGIN
    FOR detached IN
        SELECT c.relname AS name FROM pg_class c
         WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
           AND c.relname ~ '^processed_events_p[0-9]{8}$'
           AND NOT EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = c.oid)
    LOOP
        EXECUTE format('DROP TABLE %I', detached.name);
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END
$$;

-- This week's partition and the next week's (UTC), ahead of need; the purge calls it on every run.
CREATE FUNCTION processed_events_weeks_ahead() RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT count(*) FILTER (WHERE processed_events_partition((now() AT TIME ZONE 'UTC')::date + ahead))::integer
      FROM (VALUES (0), (7)) AS weeks (ahead)
$$;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = 'processed_events'::regclass) THEN
        PERFORM processed_events_weeks_ahead();
    END IF;
END
$$;
