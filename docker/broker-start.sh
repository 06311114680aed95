#!/usr/bin/env bash
# Entry point of the broker image: brings /var/lib/artemis-instance (the volume) up to date with the product's
# configuration and users (create-instance.sh, which refuses to start without each password), then runs the broker
# in the foreground as PID 1's only child: exec, so SIGTERM from docker stop reaches Artemis.
set -euo pipefail
bash /opt/payments-broker/create-instance.sh /var/lib/artemis-instance
exec /var/lib/artemis-instance/bin/artemis run
