#!/usr/bin/env bash
# CI, packaging part (called by .ci/run after the test suite): build the Linux app with the
# one documented command, run its --self-test (the build script does), print its size and the
# self-test time frozen vs source, then the tests that need the frozen app: its contents, its
# self-test with a user LD_LIBRARY_PATH, its CLI, and the Ansible playbook installing from the
# frozen offline edition. (The wheel-based Ansible run is in the main suite: tests/test_ansible.py.)
set -euo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen
t0=$(date +%s)

echo "-- build: bash installer/build_linux.sh"
bash installer/build_linux.sh
echo "   build done after $(( $(date +%s) - t0 )) s"

echo "-- benchmarks/frozen_size.py"
build/venv/bin/python benchmarks/frozen_size.py --dist dist/torch-setup --runs 3

echo "-- tests that need the frozen app"
PY=.venv/bin/python
[ -x "$PY" ] || PY=build/venv/bin/python
TORCH_SETUP_FROZEN_APP="$PWD/dist/torch-setup" "$PY" -m pytest -q -p no:cacheprovider \
  tests/test_packaging.py tests/test_ansible.py -k "frozen"
echo "   packaging CI done in $(( $(date +%s) - t0 )) s"
