#!/usr/bin/env bash
# The example Prometheus alert rules are valid, and each fires on the series that should raise it
# and stays quiet on a healthy wall (packaging/prometheus/lockstep-alerts.test.yml).
set -euo pipefail
cd "$(dirname "$0")/../packaging/prometheus"
command -v promtool >/dev/null || { echo "check-alerts: promtool is missing (make setup installs prometheus)" >&2; exit 1; }
promtool check rules lockstep-alerts.yml
promtool test rules lockstep-alerts.test.yml
