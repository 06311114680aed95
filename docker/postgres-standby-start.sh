#!/usr/bin/env bash
# Entry point of the PostgreSQL standby of compose-ha.yaml: on an empty volume, a base backup of the primary that
# streams from it afterwards (-R: standby.signal and primary_conninfo, named so that the primary's
# synchronous_standby_names matches it); then the postgres image's own entry point, as PID 1's only child, with the
# same settings as the primary so that it can be promoted. Runs as the postgres user (compose: user).
set -euo pipefail
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    PGPASSWORD=$(tr -d '\r\n' < "$DB_REPLICATION_PASSWORD_FILE")
    export PGPASSWORD
    until pg_isready -h "$PRIMARY_HOST" -U replicator -q; do
        sleep 1
    done
    pg_basebackup -h "$PRIMARY_HOST" -U replicator -D "$PGDATA" -X stream -R \
        -d "application_name=$STANDBY_NAME"
    chmod 700 "$PGDATA"
fi
exec docker-entrypoint.sh "$@"
