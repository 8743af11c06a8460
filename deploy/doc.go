// Package deploy holds doctor's deployment files, and their tests:
//
//   - systemd/doctor-health.service and doctor-health.timer: the health cron
//     of a runner host, every 5 minutes, writing the textfile metrics and the
//     state file (verified with systemd-analyze verify and security);
//   - kubernetes/doctor.yaml: a read-only ServiceAccount, Role and
//     RoleBinding and a CronJob every 10 minutes, for a runner that runs as a
//     Deployment in the cluster (the Deckhouse shape), and
//     kubernetes/doctor-cluster-read.yaml, the optional cluster-wide read
//     access (applied by the real API server with a server-side dry run, and
//     run: the CronJob's own arguments against the real API server, behind
//     the integration build tag);
//   - prometheus-rules.yaml: alerts on the metrics, with promtool's unit
//     tests in prometheus-rules.test.yaml.
//
// The package has no code: it is a place for the files and their tests.
package deploy
