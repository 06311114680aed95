-- The outbox without row churn (issue 38): a payment writes its announcement once, and nothing updates or deletes it
-- row by row afterwards.
--
-- Publication: a cursor instead of a sent mark. Every row carries the ID of the transaction that wrote it (xid, an
-- xid8 that never wraps). The relay keeps one position in announcement_relay: every row whose xid is below it has been
-- published. It only moves the position up to the oldest transaction still running anywhere in the cluster
-- (pg_snapshot_xmin), below which no transaction can still commit a row, and publishes a window in id order; the
-- rules for an account's order are in Outbox.java. One write per batch, on a one-row table.
--
-- Retention: one partition per day (UTC) of written_at; a day is dropped whole once it is past the window and every
-- transaction that could have written into it is below the relay's position (closing_xid, recorded once the day is
-- over). Rows that land in no day's partition go to the default partition, purged row by row, and only if published.
ALTER TABLE payment_announcements RENAME TO payment_announcements_v6;
CREATE SEQUENCE announcement_ids;

CREATE TABLE payment_announcements (
    id               bigint      NOT NULL DEFAULT nextval('announcement_ids'),
    -- The writing transaction: the relay's position is compared with it.
    xid              xid8        NOT NULL DEFAULT pg_current_xact_id(),
    event_id         uuid        NOT NULL,
    account_id       text        NOT NULL,
    amount_cents     bigint      NOT NULL,
    balance_cents    bigint      NOT NULL,
    -- The account's payments numbered from 1 in the order they committed: a subscriber ignores what it has seen.
    account_sequence bigint      NOT NULL,
    applied_at       timestamptz NOT NULL,
    -- Raised by a re-announcement, whose copies are rows of their own, so that the broker's duplicate detection does
    -- not drop them.
    generation       integer     NOT NULL DEFAULT 0,
    -- Publications after the first: raised only when a relay that stopped mid-window publishes that window again.
    resends          integer     NOT NULL DEFAULT 0,
    -- The partition key: when the row was written, taken after its transaction's ID (the dedup insert came first).
    -- Not applied_at, which a re-announcement's copy keeps from the payment.
    written_at       timestamptz NOT NULL DEFAULT clock_timestamp()
) PARTITION BY RANGE (written_at);

-- The relay pages through a window in id order, and finds windows and the backlog by xid.
CREATE INDEX announcements_id ON payment_announcements (id);
CREATE INDEX announcements_xid ON payment_announcements (xid);
-- An account's rows in the order they took its row lock: the relay's order check and re-announcement.
CREATE INDEX announcements_account ON payment_announcements (account_id, id);
CREATE INDEX announcements_event ON payment_announcements (event_id);

CREATE TABLE payment_announcements_default PARTITION OF payment_announcements DEFAULT;

-- The relay's position: every row below it is published. While a window [position, window_end) is being published
-- page by page in id order, its rows up to sent_through are published, and those up to attempted_through may have
-- been (a relay that stops there publishes them again, and counts them in resends).
CREATE TABLE announcement_relay (
    only_row          boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    position          xid8    NOT NULL,
    window_end        xid8    NOT NULL,
    sent_through      bigint  NOT NULL DEFAULT 0,
    attempted_through bigint  NOT NULL DEFAULT 0
);

-- The day partitions: closing_xid is a transaction ID taken after the day ended, so above that of every transaction
-- that wrote into the day.
CREATE TABLE announcement_partitions (
    name        text PRIMARY KEY,
    day         date NOT NULL UNIQUE,
    closing_xid xid8
);

-- Creates the day's partition unless it exists or the default partition holds rows of that day (then the day stays
-- in the default partition, and the WARNING says so). The application's role may not create tables: these functions
-- run as their owner (SECURITY DEFINER), and do only this.
CREATE FUNCTION announcement_partition(partition_day date) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    table_name text := 'payment_announcements_' || to_char(partition_day, 'YYYYMMDD');
    day_start timestamptz := partition_day::timestamp AT TIME ZONE 'UTC';
    day_end timestamptz := (partition_day + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF EXISTS (SELECT FROM announcement_partitions WHERE day = partition_day) THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM payment_announcements_default WHERE written_at >= day_start AND written_at < day_end) THEN
        RAISE WARNING 'announcements of % are in the default partition: no partition of their own', partition_day;
        RETURN false;
    END IF;
    -- Created apart, then attached: ATTACH locks the parent in SHARE UPDATE EXCLUSIVE mode, which payments' inserts
    -- do not wait for; a partition created in place would lock them out.
    EXECUTE format('CREATE TABLE %I (LIKE payment_announcements INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', table_name);
    EXECUTE format('ALTER TABLE payment_announcements ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
        table_name, day_start, day_end);
    INSERT INTO announcement_partitions (name, day) VALUES (table_name, partition_day);
    RETURN true;
END
$$;

-- One maintenance pass, as the purge schedule runs it: partitions for today and the next two days (UTC), the days
-- that are over closed, then every closed day past the window dropped whole if the relay's position is above its
-- closing_xid (every row in it published), and published rows of the default partition past the window deleted.
-- Answers the rows that went.
CREATE FUNCTION announcement_maintenance(keep interval) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    today date := (now() AT TIME ZONE 'UTC')::date;
    relay_position xid8;
    expired record;
    dropped bigint := 0;
    rows_in bigint;
BEGIN
    -- A drop waits for the payments in flight and holds the next ones while it waits: never for long.
    PERFORM set_config('lock_timeout', '2s', true);
    PERFORM announcement_partition(today + ahead) FROM generate_series(0, 2) AS ahead;
    UPDATE announcement_partitions SET closing_xid = pg_current_xact_id()
     WHERE closing_xid IS NULL AND day < today;
    SELECT position INTO relay_position FROM announcement_relay;
    FOR expired IN
        SELECT name FROM announcement_partitions
         WHERE closing_xid < relay_position AND ((day + 1)::timestamp AT TIME ZONE 'UTC') <= now() - keep
         ORDER BY day
    LOOP
        EXECUTE format('SELECT count(*) FROM %I', expired.name) INTO rows_in;
        EXECUTE format('DROP TABLE %I', expired.name);
        DELETE FROM announcement_partitions WHERE name = expired.name;
        dropped := dropped + rows_in;
    END LOOP;
    DELETE FROM payment_announcements_default WHERE xid < relay_position AND written_at < now() - keep;
    GET DIAGNOSTICS rows_in = ROW_COUNT;
    RETURN dropped + rows_in;
END
$$;

-- What the relay has not published yet: for operators, the gauges and the tests.
CREATE VIEW unsent_announcements AS
SELECT a.* FROM payment_announcements a, announcement_relay r WHERE a.xid >= r.position;

-- The rows of V6's outbox: the sent ones below the position (xid 1), the unsent ones at it (this transaction's ID).
SELECT announcement_partition(day)
  FROM (SELECT DISTINCT (coalesce(sent_at, applied_at) AT TIME ZONE 'UTC')::date AS day FROM payment_announcements_v6
        UNION SELECT (now() AT TIME ZONE 'UTC')::date) AS days;
INSERT INTO announcement_relay (position, window_end) VALUES (pg_current_xact_id(), pg_current_xact_id());
INSERT INTO payment_announcements (id, xid, event_id, account_id, amount_cents, balance_cents, account_sequence,
                                   applied_at, generation, resends, written_at)
SELECT id, CASE WHEN sent_at IS NULL THEN pg_current_xact_id() ELSE '1'::xid8 END, event_id, account_id,
       amount_cents, balance_cents, account_sequence, applied_at, generation, greatest(send_attempts - 1, 0),
       coalesce(sent_at, applied_at)
  FROM payment_announcements_v6 ORDER BY id;
SELECT setval('announcement_ids', coalesce((SELECT max(id) FROM payment_announcements_v6), 0) + 1, false);
DROP TABLE payment_announcements_v6;
