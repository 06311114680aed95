#!/bin/sh
# Entry point of the payment-consumer image: writes the administrator's password (ADMIN_PASSWORD) to the file the
# post-boot commands read, then runs Payara Micro with the driver, the post-boot commands and the WAR.
set -eu
: "${ADMIN_PASSWORD:?set ADMIN_PASSWORD, the password of the admin API user}"
umask 077
printf 'AS_ADMIN_USERPASSWORD=%s\n' "$ADMIN_PASSWORD" > "$ADMIN_PASSWORD_FILE"
exec java ${JVM_ARGS:-} -jar /opt/payara/payara-micro.jar \
    --nocluster \
    --addlibs /opt/payara/libs/postgresql.jar \
    --postbootcommandfile /opt/payara/config/post-boot-commands.asadmin \
    --deploy /opt/payara/deployments/payment-consumer.war \
    "$@"
