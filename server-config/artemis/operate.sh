#!/usr/bin/env bash
# An operator's commands against the payments broker, through the Artemis CLI as the operator user (role
# payments-operator; producers and the application may not do any of this):
#
#   operate.sh depth                     messages waiting, in delivery and consumers, per payments queue
#   operate.sh browse QUEUE [COUNT]      the first COUNT (10) messages of QUEUE with their properties, left in place
#                                        (rejectionReason says why the consumer refused one)
#   operate.sh retry-dead-letters        moves what the broker dead-lettered after its redelivery attempts (no
#                                        rejectionReason) back to the payments queue, once the transient cause is fixed
#   operate.sh return-conflict EVENT_ID  moves the conflicts of one event back to the payments queue, after an
#                                        administrator decided and forgot the applied one (src/site/markdown/deployment.md, Replaying dead letters)
#
# Settings (environment): ARTEMIS_HOME (an Artemis distribution, e.g. target/runtime/apache-artemis-2.44.0),
# BROKER_HOST (localhost), BROKER_PORT (61616), BROKER_OPERATOR_USER (operator), BROKER_OPERATOR_PASSWORD or
# BROKER_OPERATOR_PASSWORD_FILE, and the queue names PAYMENTS_QUEUE, DEAD_LETTER_QUEUE, CONFLICTS_QUEUE,
# QUARANTINE_QUEUE (the product's defaults).
set -euo pipefail

: "${ARTEMIS_HOME:?set ARTEMIS_HOME to an Artemis distribution, e.g. target/runtime/apache-artemis-2.44.0}"
url="tcp://${BROKER_HOST:-localhost}:${BROKER_PORT:-61616}"
user=${BROKER_OPERATOR_USER:-operator}
if [ -n "${BROKER_OPERATOR_PASSWORD_FILE:-}" ]; then
    password=$(tr -d '\r\n' < "$BROKER_OPERATOR_PASSWORD_FILE")
else
    password=${BROKER_OPERATOR_PASSWORD:?set BROKER_OPERATOR_PASSWORD (or BROKER_OPERATOR_PASSWORD_FILE)}
fi
payments=${PAYMENTS_QUEUE:-payments}
dead_letters=${DEAD_LETTER_QUEUE:-payments.dlq}
conflicts=${CONFLICTS_QUEUE:-payments.conflicts}
quarantine=${QUARANTINE_QUEUE:-payments.quarantine}

artemis() {
    "$ARTEMIS_HOME/bin/artemis" "$@" --url "$url" --user "$user" --password "$password" --silent
}
transfer() {
    "$ARTEMIS_HOME/bin/artemis" transfer --source-url "$url" --source-user "$user" --source-password "$password" \
        --target-url "$url" --target-user "$user" --target-password "$password" --silent "$@"
}

case "${1:-}" in
    depth)
        header=true
        for queue in "$payments" "$dead_letters" "$conflicts" "$quarantine"; do
            artemis queue stat --field NAME --operation EQUALS --value "$queue" --maxColumnSize -1 --single-line-header \
                | awk -F '|' -v queue="$queue" -v header="$header" '{ name = $2; gsub(/ /, "", name) }
                    (name == "NAME" && header == "true") || name == queue'
            header=false
        done
        ;;
    browse)
        queue=${2:?usage: operate.sh browse QUEUE [COUNT]}
        artemis browser --destination "queue://$queue" --message-count "${3:-10}" --verbose \
            | grep -E 'browsing|ActiveMQMessage\[|browsed:'
        ;;
    retry-dead-letters)
        transfer --source-queue "$dead_letters" --target-queue "$payments" \
            --source-filter "rejectionReason IS NULL AND _AMQ_ORIG_QUEUE = '$payments'"
        ;;
    return-conflict)
        event=${2:?usage: operate.sh return-conflict EVENT_ID}
        [[ $event =~ ^[0-9a-f-]{36}$ ]] || { echo "operate.sh: not an event ID: $event" >&2; exit 2; }
        transfer --source-queue "$conflicts" --target-queue "$payments" --source-filter "eventId = '$event'"
        ;;
    *)
        sed -n '2,13p' "$0" >&2
        exit 2
        ;;
esac
