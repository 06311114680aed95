#!/usr/bin/env bash
# First start of the PostgreSQL primary of compose-ha.yaml (the postgres image runs /docker-entrypoint-initdb.d/*.sh
# once, on an empty volume): the role the standby streams as, the one pg_hba.conf line that lets it in (the image's
# own line, "host all all all", does not cover replication connections), and synchronous replication. The last is set
# with ALTER SYSTEM, not on the command line: the standby inherits it with the base backup, and after a promotion the
# operator clears it the same way (src/site/markdown/production-topology.md), which a command-line setting would override.
set -euo pipefail
password=$(tr -d '\r\n' < "$DB_REPLICATION_PASSWORD_FILE")
psql -v ON_ERROR_STOP=1 -v password="$password" --username postgres --dbname postgres <<'SQL'
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'password';
ALTER SYSTEM SET synchronous_commit = 'on';
ALTER SYSTEM SET synchronous_standby_names = '*';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
