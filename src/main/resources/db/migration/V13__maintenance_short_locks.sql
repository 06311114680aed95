-- Maintenance that never holds the consumers' inserts for long (issue 55). A DETACH or a DROP of an attached partition
-- locks the parent exclusively: while it waits for the transactions in flight, every insert into the parent queues
-- behind it, so how long it may wait is how long a payment may wait. Each such statement now waits at most 40 ms
-- (lock_timeout) and is retried by the application after a jittered rest (LockRetries), and a detached table is
-- dropped in a statement of its own, which locks nothing a consumer uses.

-- As in V12, with the shorter wait.
CREATE OR REPLACE FUNCTION processed_events_detach_day(partition_name text, keep interval) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    rows_in bigint;
BEGIN
    IF partition_name NOT IN (SELECT processed_events_expired_days(keep)) OR keep < interval '1 day' THEN
        RAISE EXCEPTION '% is not a day partition of processed_events past a window of %', partition_name, keep;
    END IF;
    SELECT n_live_tup INTO rows_in FROM pg_stat_user_tables WHERE relid = partition_name::regclass;
    PERFORM set_config('lock_timeout', '40ms', true);
    EXECUTE format('ALTER TABLE processed_events_v7 DETACH PARTITION %I', partition_name);
    RETURN coalesce(rows_in, 0);
END
$$;

-- As in V8, with the shorter wait.
CREATE OR REPLACE FUNCTION processed_events_detach_week(partition_name text, keep interval) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    rows_in bigint;
BEGIN
    IF partition_name NOT IN (SELECT processed_events_expired_weeks(keep)) OR keep < interval '1 day' THEN
        RAISE EXCEPTION '% is not a week partition of processed_events past a window of %', partition_name, keep;
    END IF;
    SELECT n_live_tup INTO rows_in FROM pg_stat_user_tables WHERE relid = partition_name::regclass;
    PERFORM set_config('lock_timeout', '40ms', true);
    EXECUTE format('ALTER TABLE processed_events DETACH PARTITION %I', partition_name);
    RETURN coalesce(rows_in, 0);
END
$$;

-- The outbox's upkeep in steps, each its own transaction, instead of V7's announcement_maintenance (kept for a WAR
-- of an earlier version during an upgrade), which dropped attached days in one transaction and held the parent's
-- exclusive lock through its later statements.

-- Today's and the next two days' partitions (UTC), and the days that are over closed. An attach locks the default
-- partition exclusively to check it: it too waits 40 ms at most, and the next upkeep (every 10 minutes, two days
-- ahead) tries again.
CREATE FUNCTION announcement_days_ahead() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    today date := (now() AT TIME ZONE 'UTC')::date;
    made integer;
BEGIN
    PERFORM set_config('lock_timeout', '40ms', true);
    SELECT count(*) FILTER (WHERE announcement_partition(today + ahead)) INTO made FROM generate_series(0, 2) AS ahead;
    UPDATE announcement_partitions SET closing_xid = pg_current_xact_id()
     WHERE closing_xid IS NULL AND day < today;
    RETURN made;
END
$$;

-- The closed days past the window whose every row is published (the relay's position is above the day's
-- closing_xid), oldest first.
CREATE FUNCTION announcement_expired_days(keep interval) RETURNS SETOF text
    LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
    SELECT p.name FROM announcement_partitions p, announcement_relay r
     WHERE p.closing_xid < r.position AND ((p.day + 1)::timestamp AT TIME ZONE 'UTC') <= now() - keep
     ORDER BY p.day
$$;

-- Detaches one of those days, waiting 40 ms at most for the payments in flight, and answers its rows (PostgreSQL's
-- running count, never a scan). Refuses a day that is not expired or not all published.
CREATE FUNCTION announcement_detach_day(partition_name text, keep interval) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    rows_in bigint;
BEGIN
    IF partition_name NOT IN (SELECT announcement_expired_days(keep)) OR keep < interval '1 day' THEN
        RAISE EXCEPTION '% is not a day of the outbox past a window of %, all published', partition_name, keep;
    END IF;
    SELECT n_live_tup INTO rows_in FROM pg_stat_user_tables WHERE relid = partition_name::regclass;
    PERFORM set_config('lock_timeout', '40ms', true);
    EXECUTE format('ALTER TABLE payment_announcements DETACH PARTITION %I', partition_name);
    DELETE FROM announcement_partitions WHERE name = partition_name;
    RETURN coalesce(rows_in, 0);
END
$$;

-- Drops the oldest day table detached above, answering its name, or null if none is left: no lock on the live
-- parent, one day's files at a time.
CREATE FUNCTION announcement_drop_detached_day() RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    detached text;
BEGIN
    SELECT c.relname INTO detached FROM pg_class c
     WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
       AND c.relname ~ '^payment_announcements_[0-9]{8}$'
       AND NOT EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = c.oid)
     ORDER BY c.relname
     LIMIT 1;
    IF detached IS NOT NULL THEN
        EXECUTE format('DROP TABLE %I', detached);
    END IF;
    RETURN detached;
END
$$;

-- The default partition's published rows past the window (rows of a day that had no partition of its own: rare).
CREATE FUNCTION announcement_purge_default(keep interval) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    deleted bigint;
BEGIN
    DELETE FROM payment_announcements_default
     WHERE xid < (SELECT position FROM announcement_relay) AND written_at < now() - keep;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    RETURN deleted;
END
$$;
