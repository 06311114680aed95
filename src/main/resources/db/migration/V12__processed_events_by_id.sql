-- The dedup table by event ID (DEDUP_PARTITIONING=id, the layout of a new install): retention drops a whole day of
-- time-ordered IDs, and the primary key alone still decides, with no claim and no second statement per delivery.
--
-- id_version is the event ID's version nibble (RFC 9562), which the application writes from UUID.version(). Being a
-- function of event_id, the key (event_id, id_version) is unique exactly when event_id is, and a copy of an event,
-- which has its ID, lands in its original's partition whatever else it carries (occurredAt included):
--   processed_events_v7 (version 7) by range of event_id, one partition per UTC day of the ID's own time (its first
--       48 bits are Unix milliseconds), and a default sub-partition for a v7 ID of a day without one (a producer's
--       clock far off; a day already dropped, for a copy an administrator released), purged row by row;
--   processed_events_other (every other version: v4 and the rest), one table purged row by row, as `none` is.
-- Looked up by its ID, a record is in one day partition: unlike the week layout's claim, nothing looks into every
-- partition, so day partitions cost no more than weeks, keep a record at most a day past the window, and free a
-- day's files at a time.
--
-- In the other layouts the column is informative only: null for the records written before this migration (no rewrite
-- of an installed table), the version for every record after it.
ALTER TABLE processed_events ADD COLUMN id_version smallint;

CREATE FUNCTION processed_events_create_by_id() RETURNS void
    LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
    CREATE TABLE processed_events (
        event_id     uuid        NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        fingerprint  bytea,
        event_day    date        NOT NULL DEFAULT DATE '1970-01-01',
        kind         text        NOT NULL DEFAULT 'payment',
        id_version   smallint    NOT NULL,
        CONSTRAINT processed_events_pkey PRIMARY KEY (event_id, id_version),
        CONSTRAINT processed_events_kind_format CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$'),
        -- What makes the key unique exactly when event_id is: a row under a wrong version is refused, not misplaced.
        CONSTRAINT processed_events_id_version CHECK (id_version = get_byte(uuid_send(event_id), 6) >> 4)
    ) PARTITION BY LIST (id_version);
    CREATE INDEX processed_events_processed_at ON processed_events (processed_at);
    CREATE TABLE processed_events_v7 PARTITION OF processed_events FOR VALUES IN (7) PARTITION BY RANGE (event_id);
    CREATE TABLE processed_events_v7_default PARTITION OF processed_events_v7 DEFAULT;
    CREATE TABLE processed_events_other PARTITION OF processed_events DEFAULT;
END
$$;

-- The table by week as server-config/convert-dedup-to-weeks.sql creates it from now on: with the column.
CREATE OR REPLACE FUNCTION processed_events_create_by_week() RETURNS void
    LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
    CREATE TABLE processed_events (
        event_id     uuid        NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        fingerprint  bytea,
        event_day    date        NOT NULL DEFAULT DATE '1970-01-01',
        kind         text        NOT NULL DEFAULT 'payment',
        id_version   smallint,
        CONSTRAINT processed_events_pkey PRIMARY KEY (event_id, event_day),
        CONSTRAINT processed_events_kind_format CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$')
    ) PARTITION BY RANGE (event_day);
    CREATE INDEX processed_events_processed_at ON processed_events (processed_at);
    CREATE TABLE processed_events_default PARTITION OF processed_events DEFAULT;
END
$$;

-- The first v7 ID of a UTC day: its Unix milliseconds, the rest zero. A day's partition holds [day, day + 1).
CREATE FUNCTION processed_events_v7_bound(day date) RETURNS uuid
    LANGUAGE sql IMMUTABLE SET search_path = public, pg_temp AS $$
    SELECT (lpad(to_hex((extract(epoch FROM day::timestamp) * 1000)::bigint), 12, '0') || repeat('0', 20))::uuid
$$;

-- The UTC day of a v7 ID's own time; null for another version.
CREATE FUNCTION processed_events_v7_day(id uuid) RETURNS date
    LANGUAGE sql IMMUTABLE SET search_path = public, pg_temp AS $$
    SELECT CASE WHEN get_byte(uuid_send(id), 6) >> 4 = 7
                THEN (to_timestamp(('x' || lpad(substr(replace(id::text, '-', ''), 1, 12), 16, '0'))::bit(64)::bigint
                                   / 1000.0) AT TIME ZONE 'UTC')::date
           END
$$;

-- Creates the day's partition of processed_events_v7 unless it exists or the default sub-partition holds rows of that
-- day (they stay there, purged row by row). Created apart, then attached: ATTACH locks processed_events_v7 in SHARE
-- UPDATE EXCLUSIVE mode, which the consumers' inserts do not wait for (only the default sub-partition, whose rows it
-- checks, is locked for that check). A row of the day that reaches the default sub-partition between the look and the
-- attach makes the attach fail: then the day stays in the default sub-partition too. Runs as the owner: the
-- application's role may not create tables.
CREATE FUNCTION processed_events_day_partition(partition_day date) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    table_name text := 'processed_events_v7_d' || to_char(partition_day, 'YYYYMMDD');
    low uuid := processed_events_v7_bound(partition_day);
    high uuid := processed_events_v7_bound(partition_day + 1);
BEGIN
    IF to_regclass(table_name) IS NOT NULL THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM processed_events_v7_default WHERE event_id >= low AND event_id < high) THEN
        RAISE WARNING 'dedup records of % are in the default sub-partition: no partition of their own', partition_day;
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE processed_events_v7 INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', table_name);
    BEGIN
        EXECUTE format('ALTER TABLE processed_events_v7 ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
            table_name, low, high);
    EXCEPTION WHEN check_violation THEN
        RAISE WARNING 'dedup records of % reached the default sub-partition: no partition of their own', partition_day;
        EXECUTE format('DROP TABLE %I', table_name);
        RETURN false;
    END;
    RETURN true;
END
$$;

-- Yesterday's, today's and the next three days' partitions (UTC), ahead of need: the migration and every purge run
-- call it, so that a purge that does not run for three days still finds today's partition made.
CREATE FUNCTION processed_events_days_ahead() RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT count(*) FILTER (WHERE processed_events_day_partition((now() AT TIME ZONE 'UTC')::date + ahead))::integer
      FROM generate_series(-1, 3) AS ahead
$$;

-- The day partitions whose last moment is a whole window old, oldest first (none in another layout). Every record such a partition holds has
-- an ID made before its day ended, so a copy arriving now is older than the window by its ID's time, past the dedup
-- horizon (the window less a day), which in this layout counts that time: quarantined as STALE, never judged by a
-- record that is gone.
CREATE FUNCTION processed_events_expired_days(keep interval) RETURNS SETOF text
    LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
    SELECT c.relname::text
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = to_regclass('processed_events_v7')
       AND c.relname ~ '^processed_events_v7_d[0-9]{8}$'
       AND (to_date(substr(c.relname, 22), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC' <= now() - keep
     ORDER BY c.relname
$$;

-- Detaches one of those days and answers its rows (PostgreSQL's running count, never a scan), in a transaction of
-- its own: the only moment the consumers wait, since detaching locks processed_events_v7 exclusively (the deliveries
-- in flight are waited for and the next v7 ones wait behind it) for a change of the catalog, never longer than the
-- lock_timeout (then the next purge tries again). DETACH ... CONCURRENTLY is not allowed beside a default partition.
-- Refuses a day that is not expired: a caller's mistake must not drop records the horizon does not cover.
CREATE FUNCTION processed_events_detach_day(partition_name text, keep interval) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    rows_in bigint;
BEGIN
    IF partition_name NOT IN (SELECT processed_events_expired_days(keep)) OR keep < interval '1 day' THEN
        RAISE EXCEPTION '% is not a day partition of processed_events past a window of %', partition_name, keep;
    END IF;
    SELECT n_live_tup INTO rows_in FROM pg_stat_user_tables WHERE relid = partition_name::regclass;
    PERFORM set_config('lock_timeout', '2s', true);
    EXECUTE format('ALTER TABLE processed_events_v7 DETACH PARTITION %I', partition_name);
    RETURN coalesce(rows_in, 0);
END
$$;

-- Drops one day table detached above (the oldest), answering its name, or null if none is left: the purge frees one
-- day's files at a time and rests between two, so that a file system which makes an unlink wait for the disk stalls
-- the commits for one day's files at most, not for all of them at once.
CREATE FUNCTION processed_events_drop_detached_day() RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    detached text;
BEGIN
    SELECT c.relname INTO detached FROM pg_class c
     WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
       AND c.relname ~ '^processed_events_v7_d[0-9]{8}$'
       AND NOT EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = c.oid)
     ORDER BY c.relname
     LIMIT 1;
    IF detached IS NOT NULL THEN
        EXECUTE format('DROP TABLE %I', detached);
    END IF;
    RETURN detached;
END
$$;

-- Installed by ID only on an empty table (a new install); an installed table keeps its layout until its owner
-- converts it (operations.md: server-config/convert-dedup-to-ids.sql). V8 knows none and week only: SchemaMigration
-- hands it `none` for `id`, and this migration the setting itself.
DO $$
BEGIN
    IF '${dedupLayout}' NOT IN ('none', 'week', 'id') THEN
        RAISE EXCEPTION 'DEDUP_PARTITIONING=% is none of id, none and week', '${dedupLayout}';
    END IF;
    IF '${dedupLayout}' = 'id' AND NOT EXISTS (SELECT FROM processed_events)
        AND NOT EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = 'processed_events'::regclass) THEN
        DROP TABLE processed_events;
        PERFORM processed_events_create_by_id();
        PERFORM processed_events_days_ahead();
    END IF;
END
$$;
