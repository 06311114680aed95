#!/bin/sh
# Entry point of the payment-consumer image (BusyBox sh; tini is PID 1). Takes every password from NAME or from the
# file NAME_FILE names (compose secrets), and refuses to start without one: outside the development run command there
# is no default password. Writes the administrator's password to the file the post-boot commands read, then runs
# Payara Micro as the image's own entry point does (MEM_MAX_RAM_PERCENTAGE, MEM_XSS, JVM_ARGS) with the driver, the
# post-boot commands and the WAR.
set -eu

secret() {
    eval "file=\${$1_FILE:-}"
    eval "value=\${$1:-}"
    if [ -n "$file" ]; then
        value=$(cat "$file")
    fi
    if [ -z "$value" ]; then
        echo "start.sh: set $1 (or $1_FILE): there is no default password outside development" >&2
        exit 1
    fi
    export "$1=$value"
}
for name in DB_PASSWORD DB_OWNER_PASSWORD BROKER_PASSWORD ADMIN_PASSWORD; do
    secret "$name"
done
if [ "${BROKER_SSL_ENABLED:-false}" = "true" ]; then
    secret BROKER_TRUSTSTORE_PASSWORD
fi

# A single broker is its own backup (the resource adapter's second connector, for a primary/backup pair).
export BROKER_BACKUP_HOST="${BROKER_BACKUP_HOST:-${BROKER_HOST:-localhost}}"
export BROKER_BACKUP_PORT="${BROKER_BACKUP_PORT:-${BROKER_PORT:-61616}}"
# Likewise a single PostgreSQL server is its own standby (the pool's second server).
export DB_STANDBY_HOST="${DB_STANDBY_HOST:-${DB_HOST:-localhost}}"
export DB_STANDBY_PORT="${DB_STANDBY_PORT:-${DB_PORT:-5432}}"

umask 077
printf 'AS_ADMIN_USERPASSWORD=%s\n' "$ADMIN_PASSWORD" > "$ADMIN_PASSWORD_ASADMIN_FILE"
# TLS to the broker: the Artemis client reads its trust store from these system properties, which win over the
# adapter's trustStorePath and over the javax.net.ssl.* that Payara sets for itself. A file, so that the password is
# not on the command line.
# HTTPS for the admin API with ADMIN_TLS_KEYSTORE (a PKCS12 key store whose key is aliased payments-admin): Payara
# Micro's HTTPS listener on 8181 serves it (--sslcert), read through the JVM's key store properties.
: > /tmp/tls.properties
if [ "${BROKER_SSL_ENABLED:-false}" = "true" ]; then
    printf 'org.apache.activemq.ssl.trustStore=%s\norg.apache.activemq.ssl.trustStorePassword=%s\norg.apache.activemq.ssl.trustStoreType=PKCS12\n' \
        "$BROKER_TRUSTSTORE" "$BROKER_TRUSTSTORE_PASSWORD" >> /tmp/tls.properties
fi
https=""
if [ -n "${ADMIN_TLS_KEYSTORE:-}" ]; then
    secret ADMIN_TLS_KEYSTORE_PASSWORD
    printf 'javax.net.ssl.keyStore=%s\njavax.net.ssl.keyStorePassword=%s\njavax.net.ssl.keyStoreType=PKCS12\n' \
        "$ADMIN_TLS_KEYSTORE" "$ADMIN_TLS_KEYSTORE_PASSWORD" >> /tmp/tls.properties
    https="--sslport 8181 --sslcert payments-admin"
fi
# One thread for Payara's own start: HK2's parallel start of its services can deadlock, and the JVM then hangs for
# good before it serves anything (PayaraMicroProcess.SERIAL_STARTUP says how it was measured).
exec java -Dorg.glassfish.startupThreadPolicy=USE_NO_THREADS -XX:MaxRAMPercentage="${MEM_MAX_RAM_PERCENTAGE:-75.0}" -Xss"${MEM_XSS:-512k}" ${JVM_ARGS:-} \
    -jar /opt/payara/payara-micro.jar \
    --nohazelcast \
    --addlibs /opt/payara/libs/postgresql.jar:/opt/payara/libs/slf4j-api.jar:/opt/payara/libs/slf4j-jdk14.jar \
    --postbootcommandfile /opt/payara/config/post-boot-commands.asadmin \
    --deploy /opt/payara/deployments/payment-consumer.war \
    --systemproperties /tmp/tls.properties $https "$@"
