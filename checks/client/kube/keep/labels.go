package keep

import "sync"

// A label's value is kept only when a check reads the value of that key by
// name; every other label keeps its key (a check may ask whether it is
// there: IsJobPod) with an empty value. A label value is anyone's free
// text, and a team's pod or node may carry a token in one. Taints keep
// their key and effect: no check reads a taint's value.
//
// labelValuesRead are the keys whose values the code reads, with where;
// TestLabelValuesReadAreKept (audit_test.go) holds the list to every
// Labels[key] and NodeSelector[key] read of checks/ and internal/ whose key
// is a constant. The keys a runner's config names are ReadLabelKeys'.
var labelValuesRead = map[string]string{
	"kubernetes.io/arch":                         "node-arch (ArchLabel), helper-image (corev1.LabelArchStable)",
	"socialweb.computer/node-local-dns":          "node-local-dns (nodedns.NodeLabel)",
	"app.kubernetes.io/name":                     "node-local-dns, kubelet-reach (nodedns.PodLabel: the add-on's pods)",
	"pod":                                        "trace (LabelLegacyPod)",
	"manager.runner.gitlab.com/name":             "trace (LabelManagerName)",
	"pod-security.kubernetes.io/enforce":         "job-identity (psaapi.PolicyToEvaluate)",
	"pod-security.kubernetes.io/enforce-version": "job-identity",
	"pod-security.kubernetes.io/audit":           "job-identity",
	"pod-security.kubernetes.io/audit-version":   "job-identity",
	"pod-security.kubernetes.io/warn":            "job-identity",
	"pod-security.kubernetes.io/warn-version":    "job-identity",
}

// configLabelKeys are the keys the runners' config.toml names
// ([runners.kubernetes] node_selector), whose values node-arch and
// helper-image compare with each node's.
var configLabelKeys sync.Map

// ReadLabelKeys adds keys whose values a check reads because the runner's
// config names them (node_selector). The config is decoded before any
// cluster list is asked, live and in analyze alike (the lists require it),
// so every answer that has these labels is cut knowing them.
func ReadLabelKeys(keys ...string) {
	for _, k := range keys {
		configLabelKeys.Store(k, true)
	}
}

// LabelValueRead says a label's value is kept.
func LabelValueRead(key string) bool {
	if labelValuesRead[key] != "" {
		return true
	}
	_, ok := configLabelKeys.Load(key)
	return ok
}
