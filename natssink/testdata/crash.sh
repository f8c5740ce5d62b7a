#!/usr/bin/env bash
# Regenerates natssink/testdata/crash.txt: issue 35's crash probe, three
# nats-server processes on loopback (built from the module's nats-server),
# an R3 file stream, a sink with the default Config connected to the
# stream leader's node, 16 producers at 20,000 values/s for 8 s, the node
# killed with SIGKILL at 2 s (its connection lost the acks for 300 ms
# before) and restarted at 5 s. About 30 s once nats-server is built.
#
#	bash natssink/testdata/crash.sh            # 3 runs
#	COUNT=5 bash natssink/testdata/crash.sh
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-3}
out=testdata/crash.txt
go build -o /dev/null ./internal/crashprobe
for i in $(seq "$count"); do
	go run ./internal/crashprobe "$@"
done | tee "$out"
