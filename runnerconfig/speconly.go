package runnerconfig

import "github.com/BurntSushi/toml"

// SpecOnlyKeys lists the keys this package models because our specs
// (runner-gateway-cluster, deckhouse-code-runners) use them, although
// gitlab-runner v19.2.x has no such field. Such a key decodes here but is
// ignored by the real runner, so a caller checking a config for the runner
// should treat it as undecoded.
//
// It is empty: every key the specs put in config.toml that we model exists in
// the runner. In particular the spec's "Pause pods" block,
// [runners.kubernetes.autoscaler] with max_pause_pods, pause_pod_image,
// pause_pod_priority_class_name and [[runners.kubernetes.autoscaler.policy]]
// (idle_count, idle_time, ...), is the runner's own KubernetesConfig.Autoscaler
// field: max_pause_pods, pause_pod_image and pause_pod_priority_class_name
// since v18.11.0, pause_pod_image_pull_secrets since v19.1.0, unchanged
// through v19.2.2. The runner starts its pause-pod manager only when the
// table has at least one [[runners.kubernetes.autoscaler.policy]].
//
// Keys the specs use that the runner does not have are not modelled at all,
// and show up in MetaData.Undecoded: run_untagged and tag_list (registration
// flags, set in GitLab, not in config.toml) and
// runners.kubernetes.image_pull_policy (the runner's key is pull_policy).
var SpecOnlyKeys = []toml.Key{}
