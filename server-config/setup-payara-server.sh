#!/bin/sh
# Sets up a running Payara Server 6 domain for the payment consumer, from scratch:
#
#   ASADMIN=/opt/payara6/bin/asadmin ADMIN_PORT=4848 DB_PASSWORD=... BROKER_PASSWORD=... ADMIN_PASSWORD=... \
#   POSTGRESQL_JAR=target/runtime/postgresql.jar ARTEMIS_RAR=target/runtime/artemis-ra.rar \
#   WAR=target/payment-consumer.war server-config/setup-payara-server.sh
#
# It runs, in one asadmin session: the PostgreSQL driver as a common library; the database and broker passwords as
# password aliases (payments-db-password, payments-broker-password), so that no password is stored in domain.xml;
# then the resources of post-boot-commands.asadmin (the same file Payara Micro boots with; its ${ENV=NAME:default}
# values are taken from this environment, the passwords replaced by ${ALIAS=...}); and finally the WAR.
# Every other setting is an environment variable, as in the README's configuration table. The secrets are written to
# files only for the duration of the run, readable by this user alone.
set -eu

: "${ASADMIN:?set ASADMIN to the asadmin of the Payara Server installation}"
: "${DB_PASSWORD:?set DB_PASSWORD}"
: "${BROKER_PASSWORD:?set BROKER_PASSWORD}"
: "${ADMIN_PASSWORD:?set ADMIN_PASSWORD, the password of the admin API user}"
: "${POSTGRESQL_JAR:?set POSTGRESQL_JAR to the PostgreSQL JDBC driver jar}"
: "${ARTEMIS_RAR:?set ARTEMIS_RAR to artemis-ra.rar (built by mvn package)}"
: "${WAR:?set WAR to payment-consumer.war}"
ADMIN_HOST=${ADMIN_HOST:-localhost}
ADMIN_PORT=${ADMIN_PORT:-4848}
here=$(cd "$(dirname "$0")" && pwd)

umask 077
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'AS_ADMIN_ALIASPASSWORD=%s\n' "$DB_PASSWORD" > "$work/db-password"
printf 'AS_ADMIN_ALIASPASSWORD=%s\n' "$BROKER_PASSWORD" > "$work/broker-password"
printf 'AS_ADMIN_USERPASSWORD=%s\n' "$ADMIN_PASSWORD" > "$work/admin-password"

{
    echo "add-library --type common $POSTGRESQL_JAR"
    echo "create-password-alias --passwordfile $work/db-password payments-db-password"
    echo "create-password-alias --passwordfile $work/broker-password payments-broker-password"
    # ${ENV=NAME:default} -> the environment's value, else the default; comments dropped; and since multimode reads
    # a backslash as an escape (Payara Micro's post-boot reader does not), an escaped '\=' is written '\\='.
    DB_PASSWORD='${ALIAS=payments-db-password}' BROKER_PASSWORD='${ALIAS=payments-broker-password}' \
    ADMIN_PASSWORD_FILE="$work/admin-password" \
        perl -ne 'next if /^\s*(#|$)/; s/\$\{ENV=([A-Z_]+):([^}]*)\}/exists $ENV{$1} ? $ENV{$1} : $2/ge;
                  s/\\/\\\\/g; print' \
        "$here/post-boot-commands.asadmin"
    echo "deploy --name payment-consumer --contextroot payment-consumer $WAR"
} > "$work/setup.asadmin"

# multimode goes on after a failed command, and its exit code does not always say so: its output does.
"$ASADMIN" --host "$ADMIN_HOST" --port "$ADMIN_PORT" ${ASADMIN_OPTIONS:-} multimode --file "$work/setup.asadmin" \
    > "$work/output" 2>&1 || status=$?
cat "$work/output"
if [ "${status:-0}" -ne 0 ] || grep -q "^Command .* failed" "$work/output"; then
    echo "setup-payara-server.sh: a command failed (see above)" >&2
    exit 1
fi
