package dvprbac_test

import (
	"errors"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dvprbac"
	"github.com/socialwebcomputer/doctor/checks/facts"
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
	pc := facts.PluginConfig{Namespace: "code-runner-dvp", Name: "code-runner"}
	for _, tc := range []struct {
		name   string
		client *facts.PluginAPIClient
		reason string
	}{
		{"not-dvp", &facts.PluginAPIClient{NotDVP: "plugin fleeting-plugin-aws, not fleeting-plugin-dvp"}, "plugin fleeting-plugin-aws, not fleeting-plugin-dvp"},
		{"no-namespace", &facts.PluginAPIClient{Config: facts.PluginConfig{Name: "code-runner"}}, "plugin_config names no namespace (see dvp-pool)"},
		{"no-identity", &facts.PluginAPIClient{Config: pc, None: "unable to load in-cluster configuration"}, "the plugin has no identity (see dvp-pool)"},
		{"credential-refused", &facts.PluginAPIClient{Config: pc, Source: "the pod's service account",
			Identity: &facts.Identity{Err: errors.New("Unauthorized")}}, "the cluster refuses the plugin's credential (see dvp-pool)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testroot.New(t)
			root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
			rs := checktest.Check(t, dvprbac.Check, checktest.Root(root.Dir), checktest.Fact(facts.PluginAPIClientFact, tc.client))
			checktest.WantResults(t, rs, checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped, Reason: tc.reason})
		})
	}
}

// TestNeeded is the guide's code-runner Role, verb by verb, in the pool's
// namespace and the virtualization group.
func TestNeeded(t *testing.T) {
	var got []string
	for _, a := range dvprbac.Needed("ns") {
		if a.Namespace != "ns" || a.Group != facts.DVPGroup || a.WhenMissing == "" {
			t.Errorf("%+v: want namespace ns, group %s and what is lost without it", a, facts.DVPGroup)
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
