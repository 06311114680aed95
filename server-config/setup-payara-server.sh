#!/bin/sh
# Sets up a running Payara Server 7 domain for the payment consumer. The PostgreSQL database must exist (the script
# checks, and stops before deploying if it cannot connect). Run it again at any time, also after a failure half-way:
# it converges on the same domain (see src/site/markdown/deployment.md).
#
#   ASADMIN=/opt/payara7/bin/asadmin ADMIN_PORT=4848 DB_PASSWORD=... DB_OWNER_PASSWORD=... BROKER_PASSWORD=... \
#   ADMIN_PASSWORD=... \
#   POSTGRESQL_JAR=target/runtime/postgresql.jar SLF4J_JARS="target/runtime/slf4j-api.jar target/runtime/slf4j-jdk14.jar" \
#   ARTEMIS_RAR=target/runtime/artemis-ra.rar WAR=target/payment-consumer.war server-config/setup-payara-server.sh
#
# It runs, in asadmin sessions: the PostgreSQL driver and SLF4J (the resource adapter logs through it, to the server
# log) as common libraries; the database and broker passwords as
# password aliases (payments-db-password, payments-db-owner-password, payments-broker-password), so that no password is stored in domain.xml;
# then the resources of post-boot-commands.asadmin (the same file Payara Micro boots with; its ${ENV=NAME:default}
# values are taken from this environment, the passwords replaced by ${ALIAS=...}); a ping of the JDBC pool; and
# finally the WAR. Whatever a previous run created is removed first (the application, its resources, the resource
# adapter) and created again from this environment, so a rerun applies changed settings too. Every other setting is
# an environment variable, as in server-config/configuration.properties. The secrets are written to files only for the
# duration of the run, readable by this user alone. ASADMIN_OPTIONS is passed to every asadmin call (for example
# "--user admin --passwordfile /path/to/file" for a domain whose administrator has a password).
#
# TARGET (default: server, the DAS itself) may name a deployment group instead, its instances running or not: the
# resources and both applications are then targeted at the group, and the group is stopped and started before the WAR
# is deployed, so that every instance has what the domain now holds (password aliases, the file realm's user, the
# library). Each instance's configuration must use the Data Grid EJB timer service (src/site/markdown/deployment.md).
set -eu

: "${ASADMIN:?set ASADMIN to the asadmin of the Payara Server installation}"
: "${DB_PASSWORD:?set DB_PASSWORD, the password of the application's database role (DB_USER)}"
: "${DB_OWNER_PASSWORD:?set DB_OWNER_PASSWORD, the password of the schema owner Flyway migrates as (DB_OWNER_USER)}"
: "${BROKER_PASSWORD:?set BROKER_PASSWORD}"
: "${ADMIN_PASSWORD:?set ADMIN_PASSWORD, the password of the admin API user}"
: "${POSTGRESQL_JAR:?set POSTGRESQL_JAR to the PostgreSQL JDBC driver jar}"
: "${SLF4J_JARS:?set SLF4J_JARS to slf4j-api.jar and slf4j-jdk14.jar (target/runtime), which the resource adapter logs through}"
: "${ARTEMIS_RAR:?set ARTEMIS_RAR to artemis-ra.rar (built by mvn package)}"
: "${WAR:?set WAR to payment-consumer.war}"
ADMIN_HOST=${ADMIN_HOST:-localhost}
ADMIN_PORT=${ADMIN_PORT:-4848}
TARGET=${TARGET:-server}
# Where what a previous run created is removed from: the DAS's own references (the server refuses to delete what it
# still references), or, for a deployment group, the whole domain (the group's references go with it).
if [ "$TARGET" = server ]; then scope=server; else scope=domain; fi
# A single broker is its own backup (the resource adapter's second connector, for a primary/backup pair). On a cluster
# of live brokers, BROKER_HOST and BROKER_BACKUP_HOST name two of its nodes, with CONSUMER_REBALANCE_CONNECTIONS=true
# and BROKER_RECONNECT_ATTEMPTS=0 (src/site/markdown/production-topology.md, "A cluster of live brokers").
export BROKER_BACKUP_HOST="${BROKER_BACKUP_HOST:-${BROKER_HOST:-localhost}}"
export BROKER_BACKUP_PORT="${BROKER_BACKUP_PORT:-${BROKER_PORT:-61616}}"
# Likewise a single PostgreSQL server is its own standby (the pool's second server).
export DB_STANDBY_HOST="${DB_STANDBY_HOST:-${DB_HOST:-localhost}}"
export DB_STANDBY_PORT="${DB_STANDBY_PORT:-${DB_PORT:-5432}}"
here=$(cd "$(dirname "$0")" && pwd)

umask 077
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'AS_ADMIN_ALIASPASSWORD=%s\n' "$DB_PASSWORD" > "$work/db-password"
printf 'AS_ADMIN_ALIASPASSWORD=%s\n' "$DB_OWNER_PASSWORD" > "$work/db-owner-password"
printf 'AS_ADMIN_ALIASPASSWORD=%s\n' "$BROKER_PASSWORD" > "$work/broker-password"
printf 'AS_ADMIN_USERPASSWORD=%s\n' "$ADMIN_PASSWORD" > "$work/admin-password"

# Runs the commands of file $1 in one asadmin session and prints their output. multimode goes on after a failed
# command, and its exit code does not always say so: its output does.
session() {
    status=0
    "$ASADMIN" --host "$ADMIN_HOST" --port "$ADMIN_PORT" ${ASADMIN_OPTIONS:-} multimode --file "$1" \
        > "$1.out" 2>&1 || status=$?
    cat "$1.out"
    if [ "$status" -ne 0 ] || grep -q "^Command .* failed" "$1.out"; then
        return 1
    fi
}

# 1. What a previous run left: one session of list commands; each line of an answer is filed under its command.
# Applications and resources are listed for the whole domain (whatever they were targeted at before).
cat > "$work/inventory" <<'EOF'
list-libraries --type common
list-password-aliases
list-applications domain
list-connector-resources domain
list-connector-connection-pools
list-jdbc-resources domain
list-jdbc-connection-pools
list-resource-adapter-configs
list-file-users
list-resource-refs server
EOF
if ! session "$work/inventory" > /dev/null; then
    cat "$work/inventory.out"
    echo "setup-payara-server.sh: cannot read the domain at $ADMIN_HOST:$ADMIN_PORT (see above)" >&2
    exit 1
fi
awk '/^Command [^ ]+ executed successfully/ { for (i = 0; i < n; i++) print $2 "\t" held[i]; n = 0; next }
     { held[n++] = $1 }' "$work/inventory.out" > "$work/inventory.found"
# has COMMAND NAME: whether COMMAND listed NAME.
has() {
    grep -q -x -F "$(printf '%s\t%s' "$1" "$2")" "$work/inventory.found"
}
# when COMMAND NAME LINE: LINE if COMMAND listed NAME; unless: LINE if it did not.
when() {
    if has "$1" "$2"; then echo "$3"; fi
}
unless() {
    if ! has "$1" "$2"; then echo "$3"; fi
}

# 2. Remove it, dependants first, then create everything from this environment.
{
    when list-password-aliases payments-db-password \
        "update-password-alias --passwordfile $work/db-password payments-db-password"
    unless list-password-aliases payments-db-password \
        "create-password-alias --passwordfile $work/db-password payments-db-password"
    when list-password-aliases payments-db-owner-password \
        "update-password-alias --passwordfile $work/db-owner-password payments-db-owner-password"
    unless list-password-aliases payments-db-owner-password \
        "create-password-alias --passwordfile $work/db-owner-password payments-db-owner-password"
    when list-password-aliases payments-broker-password \
        "update-password-alias --passwordfile $work/broker-password payments-broker-password"
    unless list-password-aliases payments-broker-password \
        "create-password-alias --passwordfile $work/broker-password payments-broker-password"
    for library in $POSTGRESQL_JAR $SLF4J_JARS; do
        unless list-libraries "$(basename "$library")" "add-library --type common $library"
    done
    when list-applications payment-consumer "undeploy --target $scope payment-consumer"
    if [ "$scope" = domain ]; then
        # A domain set up on the DAS before: its references would keep the resources from being deleted domain-wide.
        for ref in jms/paymentsConnectionFactory jdbc/payments jdbc/payments-owner; do
            when list-resource-refs "$ref" "delete-resource-ref --target server $ref"
        done
    fi
    when list-connector-resources jms/paymentsConnectionFactory \
        "delete-connector-resource --target $scope jms/paymentsConnectionFactory"
    when list-connector-connection-pools payments-jms-pool "delete-connector-connection-pool payments-jms-pool"
    when list-jdbc-resources jdbc/payments "delete-jdbc-resource --target $scope jdbc/payments"
    when list-jdbc-connection-pools payments-pool "delete-jdbc-connection-pool payments-pool"
    when list-jdbc-resources jdbc/payments-owner "delete-jdbc-resource --target $scope jdbc/payments-owner"
    when list-jdbc-connection-pools payments-owner-pool "delete-jdbc-connection-pool payments-owner-pool"
    when list-applications artemis-ra "undeploy --target $scope artemis-ra"
    when list-resource-adapter-configs artemis-ra "delete-resource-adapter-config artemis-ra"
    when list-file-users "${ADMIN_USER:-admin}" "delete-file-user ${ADMIN_USER:-admin}"
    # ${ENV=NAME:default} -> the environment's value, else the default; comments dropped; and since multimode reads
    # a backslash as an escape (Payara Micro's post-boot reader does not), an escaped '\=' is written '\\='.
    DB_PASSWORD='${ALIAS=payments-db-password}' DB_OWNER_PASSWORD='${ALIAS=payments-db-owner-password}' \
    BROKER_PASSWORD='${ALIAS=payments-broker-password}' \
    ADMIN_PASSWORD_ASADMIN_FILE="$work/admin-password" \
        perl -ne 'next if /^\s*(#|$)/; s/\$\{ENV=([A-Z_]+):([^}]*)\}/exists $ENV{$1} ? $ENV{$1} : $2/ge;
                  s/\\/\\\\/g; print' \
        "$here/post-boot-commands.asadmin" \
        | TARGET="$TARGET" perl -pe 's/^(create-jdbc-resource|create-connector-resource|deploy) /$1 --target $ENV{TARGET} /'
} > "$work/resources"
# The application checks that no password is a development default: it reads them as MicroProfile Config values, here
# references to the aliases (domain.xml holds no password).
cat >> "$work/resources" <<'EOF'
set-config-property --propertyName=DB_PASSWORD --propertyValue=${ALIAS=payments-db-password} --source=domain
set-config-property --propertyName=DB_OWNER_PASSWORD --propertyValue=${ALIAS=payments-db-owner-password} --source=domain
set-config-property --propertyName=BROKER_PASSWORD --propertyValue=${ALIAS=payments-broker-password} --source=domain
EOF
session "$work/resources" || { echo "setup-payara-server.sh: a command failed (see above); run it again once fixed" >&2; exit 1; }

# A deployment group's instances pick up the library and the password aliases only when they start: (re)start them
# before the application is deployed to them, all at once: the application is not deployed at this point (a rerun
# undeployed it above), so one by one would keep nothing serving and only take longer. Not restart-deployment-group:
# it fails on instances that are not running (Payara 6.2025.10: "Timeout must be at least 1 second long").
if [ "$TARGET" != server ]; then
    printf 'stop-deployment-group %s\nstart-deployment-group %s\n' "$TARGET" "$TARGET" > "$work/restart"
    session "$work/restart" || { echo "setup-payara-server.sh: restarting $TARGET failed (see above)" >&2; exit 1; }
fi

# The cause of a failed ping, as PostgreSQL gave it. The pools list the primary and the standby, the same server twice
# when there is one, and the driver then reports only "Could not find a server with specified targetServerType" (it
# skips a server it failed to reach once): a pool of DB_HOST alone, pinged as this role, names the cause (a missing
# database or role, a wrong password, a refused certificate). Prints it, or that the role gets in.
cause() {
    local user=$1 alias=$2
    {
        printf '%s' "create-jdbc-connection-pool --datasourceclassname org.postgresql.ds.PGSimpleDataSource"
        printf '%s' " --restype javax.sql.DataSource --property serverName=${DB_HOST:-localhost}\\\\:${DB_PORT:-5432}"
        printf '%s' ":databaseName=${DB_NAME:-payments}:user=$user:password=\${ALIAS=$alias}"
        printf '%s' ":sslMode=${DB_SSL_MODE:-prefer}:sslRootCert=${DB_SSL_ROOT_CERT:-/etc/ssl/certs/ca-certificates.crt}"
        printf '%s\n' " payments-cause-pool" "ping-connection-pool payments-cause-pool"
    } > "$work/cause"
    if session "$work/cause" > /dev/null; then
        echo "it answers"
    else
        sed -n 's/.*because: //p' "$work/cause.out" | sed 's/ *Please check the server.log.*//' | head -1
    fi
    printf 'delete-jdbc-connection-pool payments-cause-pool\n' > "$work/cause-cleanup"
    session "$work/cause-cleanup" > /dev/null || true
}

# 3. The database must answer before the application deploys (it migrates the schema at start).
printf 'ping-connection-pool payments-pool\nping-connection-pool payments-owner-pool\n' > "$work/ping"
if ! session "$work/ping"; then
    echo "setup-payara-server.sh: PostgreSQL database '${DB_NAME:-payments}' on ${DB_HOST:-localhost}:${DB_PORT:-5432}" \
        "does not answer to both of its roles. As the application's role ${DB_USER:-payments_app}:" \
        "$(cause "${DB_USER:-payments_app}" payments-db-password)." \
        "As the schema's owner ${DB_OWNER_USER:-postgres}: $(cause "${DB_OWNER_USER:-postgres}" payments-db-owner-password)." \
        "Create the database and its roles (server-config/create-database.sh, see src/site/markdown/deployment.md;" \
        "by hand: createdb -h ${DB_HOST:-localhost} -U postgres ${DB_NAME:-payments}), or fix DB_*, then run this" \
        "script again." >&2
    exit 1
fi

echo "deploy --target $TARGET --name payment-consumer --contextroot payment-consumer $WAR" > "$work/deploy"
session "$work/deploy" || { echo "setup-payara-server.sh: the deployment failed (see above); run it again once fixed" >&2; exit 1; }
