// Package bench measures doctor against the guide's manual runbook
// (runbook.sh) and on a cluster of 10,000 pods and 1,000 nodes. The code is
// in integration-tagged test files that need the real etcd and kube-apiserver
// of testkit/testenv; run it with bench/run.sh. RESULTS.md has the figures.
package bench
