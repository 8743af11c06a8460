package dvprbac_test

import (
	"errors"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dvprbac"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

func TestCases(t *testing.T) { checktest.Cases(t, dvprbac.Check) }

// config is an instance runner whose autoscaler runs fleeting-plugin-dvp.
const config = `[[runners]]
  name = "dvp"
  url = "https://code.example.invalid"
  executor = "instance"
  [runners.autoscaler]
    plugin = "fleeting-plugin-dvp"
    [runners.autoscaler.plugin_config]
      namespace = "code-runner-dvp"
      name = "code-runner"
`

// TestNothingToAsk: when the plugin's client says there is nothing to
// review (not the DVP plugin, no namespace, no identity, a refused
// credential), the check skips, saying which, and asks nothing of a
// cluster (the given client has none).
func TestNothingToAsk(t *testing.T) {
	pc := configfacts.PluginConfig{Namespace: "code-runner-dvp", Name: "code-runner"}
	for _, tc := range []struct {
		name   string
		client *kubefacts.PluginAPIClient
		reason string
	}{
		{"not-dvp", &kubefacts.PluginAPIClient{NotDVP: "plugin fleeting-plugin-aws, not fleeting-plugin-dvp"}, "plugin fleeting-plugin-aws, not fleeting-plugin-dvp"},
		{"no-namespace", &kubefacts.PluginAPIClient{Config: configfacts.PluginConfig{Name: "code-runner"}}, "plugin_config names no namespace (see dvp-pool)"},
		{"no-identity", &kubefacts.PluginAPIClient{Config: pc, None: "unable to load in-cluster configuration"}, "the plugin has no identity (see dvp-pool)"},
		{"credential-refused", &kubefacts.PluginAPIClient{Config: pc, Source: "the pod's service account",
			Identity: &kubefacts.Identity{Err: errors.New("Unauthorized")}}, "the cluster refuses the plugin's credential (see dvp-pool)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testroot.New(t)
			root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
			rs := checktest.Check(t, dvprbac.Check, checktest.Root(root.Dir), checktest.Fact(kubefacts.PluginAPIClientFact, tc.client))
			checktest.WantResults(t, rs, checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped, Reason: tc.reason})
		})
	}
}

// TestNeeded is the guide's code-runner Role, verb by verb, in the pool's
// namespace and the virtualization group.
func TestNeeded(t *testing.T) {
	var got []string
	for _, a := range dvprbac.Needed("ns") {
		if a.Namespace != "ns" || a.Group != kubefacts.DVPGroup || a.WhenMissing == "" {
			t.Errorf("%+v: want namespace ns, group %s and what is lost without it", a, kubefacts.DVPGroup)
		}
		got = append(got, a.Verb+" "+a.Resource)
	}
	want := []string{"get virtualmachinepools", "patch virtualmachinepools", "get virtualmachines", "list virtualmachines", "delete virtualmachines"}
	if len(got) != len(want) {
		t.Fatalf("needed %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("needed %q, want %q", got, want)
			break
		}
	}
}
