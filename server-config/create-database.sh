#!/usr/bin/env bash
# Creates the payments database if it is missing and applies database-roles.sql to it: the schema owner Flyway
# migrates as (DB_OWNER_USER) and the application's role (DB_USER), with their passwords. Run it before the first
# deployment and whenever a password changes; a rerun converges. Needs psql and createdb, and connects as a
# superuser through the usual libpq variables (PGHOST, PGPORT, PGUSER, PGPASSWORD or PGPASSFILE):
#
#   PGHOST=db.internal PGUSER=postgres DB_OWNER_PASSWORD=... DB_PASSWORD=... server-config/create-database.sh
#
# Settings (defaults: configuration.properties): DB_NAME (payments), DB_OWNER_USER (postgres, the application's
# default too; give the schema a role of its own in production, e.g. payments_owner), DB_USER (payments_app),
# DB_OWNER_PASSWORD and DB_PASSWORD (required; or DB_OWNER_PASSWORD_FILE / DB_PASSWORD_FILE naming a file that holds
# it); DB_SUPERUSER_PASSWORD_FILE, if set, is read into PGPASSWORD.
# TLS is libpq's own: PGSSLMODE=verify-full PGSSLROOTCERT=the CA's file (what DB_SSL_MODE and DB_SSL_ROOT_CERT are to
# the application's pools).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

secret() {
    local name=$1 file_name="${1}_FILE"
    if [ -n "${!file_name:-}" ]; then
        tr -d '\r\n' < "${!file_name}"
    elif [ -n "${!name:-}" ]; then
        printf '%s' "${!name}"
    else
        echo "create-database.sh: set $name (or $file_name): there is no default password" >&2
        exit 1
    fi
}
database=${DB_NAME:-payments}
owner=${DB_OWNER_USER:-postgres}
app=${DB_USER:-payments_app}
owner_password=$(secret DB_OWNER_PASSWORD)
app_password=$(secret DB_PASSWORD)
if [ -n "${DB_SUPERUSER_PASSWORD_FILE:-}" ]; then
    PGPASSWORD=$(tr -d '\r\n' < "$DB_SUPERUSER_PASSWORD_FILE")
    export PGPASSWORD
fi

exists=$(psql -X -v ON_ERROR_STOP=1 -d postgres -tA -v name="$database" <<'SQL'
SELECT count(*) FROM pg_database WHERE datname = :'name';
SQL
)
if [ "$exists" = 0 ]; then
    createdb "$database"
    echo "Created database $database"
fi
psql -X -q -v ON_ERROR_STOP=1 -d "$database" -v owner="$owner" -v owner_password="$owner_password" \
    -v app="$app" -v app_password="$app_password" -v roles="$here/database-roles.sql" <<'SQL'
SELECT set_config('payments.owner', :'owner', false) \g /dev/null
SELECT set_config('payments.owner_password', :'owner_password', false) \g /dev/null
SELECT set_config('payments.app', :'app', false) \g /dev/null
SELECT set_config('payments.app_password', :'app_password', false) \g /dev/null
\i :roles
SQL
echo "Database $database: owner $owner, application role $app"
