#!/usr/bin/env bash
# Creates, or brings up to date, the payments broker: an ActiveMQ Artemis instance made from a broker distribution,
# configured by the files next to this script. Run it before every start; a rerun converges on the same instance
# and keeps the journal (data/). Used alike by the run command, the tests, the container and operators:
#
#   ARTEMIS_HOME=/opt/apache-artemis-2.44.0 \
#   BROKER_PASSWORD=... BROKER_PRODUCER_PASSWORD=... BROKER_OPERATOR_PASSWORD=... \
#     server-config/artemis/create-instance.sh /var/lib/payments-broker
#   /var/lib/payments-broker/bin/artemis run
#
# The product owns broker.xml, bootstrap.xml, management.xml and jolokia-access.xml (copied into etc/ on every run),
# the users and roles files (rewritten on every run from the settings below, passwords hashed) and the block it
# appends to etc/artemis.profile. Everything else in the instance is what `artemis create` writes.
#
# Settings (environment):
#   ARTEMIS_HOME                 the Artemis distribution (required)
#   BROKER_USER / _PASSWORD      the application, role payments-consumer (user default: payments)
#   BROKER_PRODUCER_USER / _PASSWORD   producers, role payments-producer (user default: payments-producer)
#   BROKER_OPERATOR_USER / _PASSWORD   operators, role payments-operator: console, CLI (user default: operator)
#   BROKER_SUBSCRIBER_USER / _PASSWORD downstream services reading the announcements of applied payments, role
#                                payments-subscriber (user default: payments-subscriber; no password: no such user)
#   BROKER_ANNOUNCEMENT_QUEUES   the durable queues on the announcement address payments.applied, one per downstream
#                                service, comma-separated (default: payments.applied.ledger)
#   *_PASSWORD_FILE              instead of a password, a file holding it (container secrets)
#   BROKER_BIND, BROKER_PORT     the acceptor for every protocol (default 127.0.0.1:61616)
#   BROKER_CONSOLE_HOST, BROKER_CONSOLE_PORT   the web console (default 127.0.0.1:8161)
#   BROKER_METRICS_HOST, BROKER_METRICS_PORT   the broker's Prometheus endpoint (default 127.0.0.1:9404)
#   BROKER_TLS_KEYSTORE          a PKCS12 key store with the broker's certificate: if set, a second acceptor for every
#                                protocol over TLS on BROKER_TLS_PORT (61617), key store password from
#                                BROKER_TLS_KEYSTORE_PASSWORD or BROKER_TLS_KEYSTORE_PASSWORD_FILE
#   BROKER_PLUGINS               the directory of the broker plugins' jars (default: target/runtime/broker-plugins,
#                                built by mvn package)
#   BROKER_STORE                 the directory of the journal, bindings, paging and large messages (default: data/ in
#                                the instance)
#
# A primary/backup pair with a shared store (src/site/markdown/production-topology.md): both brokers name the same BROKER_STORE
# (a shared file system with working file locks: NFSv4, GFS2, CephFS, a SAN), and the file lock there decides which
# one is live, so two can never be live at once. The backup opens no acceptor until it takes over.
#   BROKER_HA_ROLE               primary or backup (default: none, a broker on its own)
#   BROKER_ANNOUNCE_HOST         the host name clients and the peer reach this broker by (default: BROKER_BIND)
#   BROKER_PEER_HOST, BROKER_PEER_PORT   the other broker of the pair
#   BROKER_CLUSTER_PASSWORD      the pair's own login to each other (user payments-cluster), also as _FILE
#
# A cluster of live brokers (production-topology.md, "A cluster of live brokers"): every node takes sends and serves
# consumers, each from its own journal. List the other live nodes on each; the pair settings above may come too (each
# node with its backup), and then the backup lists the same nodes as its primary.
#   BROKER_CLUSTER_PEERS         the other live nodes, host:port,host:port (default: none, no cluster of live nodes)
#   BROKER_REDISTRIBUTION_DELAY_MS   how long a queue left with no consumer on its node keeps its messages before they
#                                move to a node that has one (default 5000)
#   BROKER_CLUSTER_PASSWORD      as above: the nodes' login to each other (user payments-cluster)
set -euo pipefail

instance=${1:?usage: create-instance.sh <instance directory>}
here=$(cd "$(dirname "$0")" && pwd)
: "${ARTEMIS_HOME:?set ARTEMIS_HOME to an Artemis distribution, e.g. target/runtime/apache-artemis-2.44.0 (mvn package)}"
artemis="$ARTEMIS_HOME/bin/artemis"
[ -x "$artemis" ] || { echo "create-instance.sh: no Artemis distribution at ARTEMIS_HOME=$ARTEMIS_HOME" >&2; exit 1; }

# A password from NAME, or from the file NAME_FILE names; none is an error naming the setting.
secret() {
    local name=$1 file_name="${1}_FILE"
    if [ -n "${!file_name:-}" ]; then
        tr -d '\r\n' < "${!file_name}"
    elif [ -n "${!name:-}" ]; then
        printf '%s' "${!name}"
    else
        echo "create-instance.sh: set $name (or $file_name): the broker has no default password" >&2
        exit 1
    fi
}
consumer_user=${BROKER_USER:-payments}
producer_user=${BROKER_PRODUCER_USER:-payments-producer}
operator_user=${BROKER_OPERATOR_USER:-operator}
consumer_password=$(secret BROKER_PASSWORD)
producer_password=$(secret BROKER_PRODUCER_PASSWORD)
operator_password=$(secret BROKER_OPERATOR_PASSWORD)
subscriber_user=${BROKER_SUBSCRIBER_USER:-payments-subscriber}
subscriber_password=
if [ -n "${BROKER_SUBSCRIBER_PASSWORD:-}${BROKER_SUBSCRIBER_PASSWORD_FILE:-}" ]; then
    subscriber_password=$(secret BROKER_SUBSCRIBER_PASSWORD)
fi
plugins=${BROKER_PLUGINS:-$here/../../target/runtime/broker-plugins}
[ -f "$plugins/payment-consumer-broker-plugins.jar" ] \
    || { echo "create-instance.sh: no broker plugins in $plugins (run mvn package)" >&2; exit 1; }

if [ ! -f "$instance/etc/artemis.profile" ]; then
    # The login given here is replaced below; --role sets the console's role (HAWTIO_ROLES in artemis.profile).
    "$artemis" create "$instance" --silent --require-login --no-autotune \
        --user "$operator_user" --password "$operator_password" --role payments-operator \
        --no-amqp-acceptor --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor > /dev/null
fi

for file in broker.xml bootstrap.xml management.xml jolokia-access.xml; do
    cp "$here/$file" "$instance/etc/$file"
done
cp "$plugins"/*.jar "$instance/lib/"

hash() {
    "$artemis" mask --hash "$1" | sed -n 's/^result: //p'
}
users=$(mktemp "$instance/etc/.users.XXXXXX")
roles=$(mktemp "$instance/etc/.roles.XXXXXX")
{
    printf '%s = ENC(%s)\n' "$consumer_user" "$(hash "$consumer_password")"
    printf '%s = ENC(%s)\n' "$producer_user" "$(hash "$producer_password")"
    printf '%s = ENC(%s)\n' "$operator_user" "$(hash "$operator_password")"
    [ -z "$subscriber_password" ] || printf '%s = ENC(%s)\n' "$subscriber_user" "$(hash "$subscriber_password")"
} > "$users"
{
    printf 'payments-consumer = %s\n' "$consumer_user"
    printf 'payments-producer = %s\n' "$producer_user"
    printf 'payments-operator = %s\n' "$operator_user"
    [ -z "$subscriber_password" ] || printf 'payments-subscriber = %s\n' "$subscriber_user"
} > "$roles"
chmod 600 "$users" "$roles"
mv "$users" "$instance/etc/artemis-users.properties"
mv "$roles" "$instance/etc/artemis-roles.properties"

# etc/broker.properties, which Artemis applies over broker.xml at start: the TLS acceptor when a key store is given
# (the same protocols as the plain one, which stays for loopback clients).
properties="$instance/etc/broker.properties"
: > "$properties"
if [ -n "${BROKER_TLS_KEYSTORE:-}" ]; then
    [ -f "$BROKER_TLS_KEYSTORE" ] || { echo "create-instance.sh: no key store at BROKER_TLS_KEYSTORE=$BROKER_TLS_KEYSTORE" >&2; exit 1; }
    keystore_password=$(secret BROKER_TLS_KEYSTORE_PASSWORD)
    tls=acceptorConfigurations.tls
    {
        echo "$tls.factoryClassName=org.apache.activemq.artemis.core.remoting.impl.netty.NettyAcceptorFactory"
        echo "$tls.params.host=${BROKER_BIND:-127.0.0.1}"
        echo "$tls.params.port=${BROKER_TLS_PORT:-61617}"
        echo "$tls.params.protocols=CORE,AMQP,STOMP,OPENWIRE"
        echo "$tls.params.sslEnabled=true"
        echo "$tls.params.keyStoreType=PKCS12"
        echo "$tls.params.keyStorePath=$BROKER_TLS_KEYSTORE"
        echo "$tls.params.keyStorePassword=$keystore_password"
        echo "$tls.params.supportAdvisory=false"
        echo "$tls.params.suppressInternalManagementObjects=true"
    } > "$properties"
fi
ha_role=${BROKER_HA_ROLE:-none}
case "$ha_role" in
    none | primary | backup) ;;
    *) echo "create-instance.sh: BROKER_HA_ROLE must be none, primary or backup, not $ha_role" >&2; exit 1 ;;
esac
IFS=, read -r -a cluster_peers <<< "${BROKER_CLUSTER_PEERS:-}"
for peer in "${cluster_peers[@]}"; do
    [[ "$peer" =~ ^[A-Za-z0-9.-]+:[0-9]+$ ]] \
        || { echo "create-instance.sh: BROKER_CLUSTER_PEERS: not a host:port: $peer" >&2; exit 1; }
done
if [ "$ha_role" != none ] || [ ${#cluster_peers[@]} -gt 0 ]; then
    if [ "$ha_role" != none ]; then
        : "${BROKER_PEER_HOST:?create-instance.sh: BROKER_HA_ROLE=$ha_role needs BROKER_PEER_HOST and BROKER_PEER_PORT}"
        : "${BROKER_PEER_PORT:?create-instance.sh: BROKER_HA_ROLE=$ha_role needs BROKER_PEER_PORT}"
    fi
    cluster_password=$(secret BROKER_CLUSTER_PASSWORD)
    netty=org.apache.activemq.artemis.core.remoting.impl.netty.NettyConnectorFactory
    connector() {
        echo "connectorConfigurations.$1.factoryClassName=$netty"
        echo "connectorConfigurations.$1.params.host=$2"
        echo "connectorConfigurations.$1.params.port=$3"
    }
    {
        if [ "$ha_role" = primary ]; then
            echo "HAPolicyConfiguration=SHARED_STORE_PRIMARY"
        elif [ "$ha_role" = backup ]; then
            echo "HAPolicyConfiguration=SHARED_STORE_BACKUP"
            # Once the primary is back, the backup hands over and waits again: clients follow (failback).
            echo "HAPolicyConfiguration.allowFailBack=true"
        fi
        if [ "$ha_role" != none ]; then
            # A clean stop (maintenance, a rolling upgrade) hands over too, not only a crash.
            echo "HAPolicyConfiguration.failoverOnServerShutdown=true"
        else
            # A live node with no backup: a clean stop (scale-down, maintenance) first moves the messages it holds to
            # another live node, so that they need not wait for its return. A crash cannot: its messages wait in its
            # journal.
            echo "HAPolicyConfiguration=PRIMARY_ONLY"
            echo "HAPolicyConfiguration.scaleDownConfiguration.enabled=true"
            echo "HAPolicyConfiguration.scaleDownConfiguration.connectors=$(seq -s, -f 'node%g' 0 $((${#cluster_peers[@]} - 1)))"
        fi
        # The connector each broker announces to clients in the topology, and those to reach the others by.
        connector self "${BROKER_ANNOUNCE_HOST:-${BROKER_BIND:-127.0.0.1}}" "${BROKER_PORT:-61616}"
        connectors=()
        if [ "$ha_role" != none ]; then
            connector peer "$BROKER_PEER_HOST" "$BROKER_PEER_PORT"
            connectors+=(peer)
        fi
        for index in "${!cluster_peers[@]}"; do
            connector "node$index" "${cluster_peers[$index]%:*}" "${cluster_peers[$index]##*:}"
            connectors+=("node$index")
        done
        # Named as before live nodes existed, so that an existing pair keeps its cluster connection's name.
        cluster=payments-pair
        [ ${#cluster_peers[@]} -eq 0 ] || cluster=payments-cluster
        echo "clusterConfigurations.$cluster.connectorName=self"
        echo "clusterConfigurations.$cluster.staticConnectors=$(IFS=,; echo "${connectors[*]}")"
        if [ ${#cluster_peers[@]} -eq 0 ]; then
            # A pair alone: the cluster connection exists only so that clients learn the backup; it moves no messages.
            echo "clusterConfigurations.$cluster.messageLoadBalancingType=OFF"
        else
            # Live nodes: a message stays on the node it was sent to, where consumers of every instance are attached
            # (no hop, no second journal write); only a queue left without a consumer on its node hands its messages
            # to a node that has one (redistribution, below).
            echo "clusterConfigurations.$cluster.messageLoadBalancingType=OFF_WITH_REDISTRIBUTION"
            # Not the announcements: the cluster connection would still split a multicast queue's messages between
            # the nodes (of 10 sent to one node, 5 went to the other's queue), and hold those meant for a dead node in
            # the store-and-forward queue to it. Each stays on the node the relay sent it to; a subscriber reads its
            # queue on every node and orders an account's announcements by their sequence (message-contract.md).
            echo "clusterConfigurations.$cluster.address=!payments.applied"
            # Long enough to outlast a consumer's reconnection (the adapter sets its sessions up again 2 s after a
            # node joins or leaves), so that messages do not move away and back for a blip.
            echo "addressSettings.\"#\".redistributionDelay=${BROKER_REDISTRIBUTION_DELAY_MS:-5000}"
        fi
        echo "clusterConfigurations.$cluster.reconnectAttempts=-1"
        # A peer that goes silent (its host hung, its network gone) is dropped from the topology 6 to 12 s after it
        # last answered (Artemis: 60 to 120 s), and the clients are told: a consumer then sets its sessions up on the
        # nodes that answer, instead of retrying the silent one, each try costing a 5 s call timeout (failures.md).
        # The same bounds as the consumer's connections (ra.xml).
        echo "clusterConfigurations.$cluster.clientFailureCheckPeriod=2000"
        echo "clusterConfigurations.$cluster.connectionTTL=6000"
        echo "clusterConfigurations.$cluster.callTimeout=5000"
        echo "clusterUser=payments-cluster"
        echo "clusterPassword=$cluster_password"
    } >> "$properties"
fi
# The announcement address's durable queues, one per downstream service: each receives every announcement.
IFS=, read -r -a announcement_queues <<< "${BROKER_ANNOUNCEMENT_QUEUES:-payments.applied.ledger}"
for queue in "${announcement_queues[@]}"; do
    queue=$(echo "$queue" | tr -d ' ')
    [ -n "$queue" ] || continue
    [[ "$queue" =~ ^[A-Za-z0-9._-]+$ ]] \
        || { echo "create-instance.sh: BROKER_ANNOUNCEMENT_QUEUES: not a queue name: $queue" >&2; exit 1; }
    echo "addressConfigurations.\"payments.applied\".queueConfigs.\"$queue\".routingType=MULTICAST" >> "$properties"
done
chmod 600 "$properties"

# The system properties broker.xml and bootstrap.xml read. Set at run time, so later -D options in
# JAVA_ARGS_APPEND (given when starting) still win over these.
profile="$instance/etc/artemis.profile"
sed -i '/^# payments: settings of create-instance.sh$/,$d' "$profile"
[ -z "$(tail -c 1 "$profile")" ] || echo >> "$profile"
cat >> "$profile" <<EOF
# payments: settings of create-instance.sh
JAVA_ARGS_APPEND="-Dbroker.bind=${BROKER_BIND:-127.0.0.1} -Dbroker.port=${BROKER_PORT:-61616} -Dbroker.console.host=${BROKER_CONSOLE_HOST:-127.0.0.1} -Dbroker.console.port=${BROKER_CONSOLE_PORT:-8161} -Dbroker.metrics.host=${BROKER_METRICS_HOST:-127.0.0.1} -Dbroker.metrics.port=${BROKER_METRICS_PORT:-9404} -Dbroker.store=${BROKER_STORE:-data} -XX:+ExitOnOutOfMemoryError \${JAVA_ARGS_APPEND:-}"
EOF
echo "Broker instance $instance ready: $instance/bin/artemis run"
