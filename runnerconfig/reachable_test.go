package runnerconfig

import "testing"

func TestWaitsForReachable(t *testing.T) {
	for _, tc := range []struct {
		r    Runner
		want Waiting
	}{
		{Runner{}, Waiting{}},
		{Runner{FeatureFlags: map[string]bool{"FF_WAIT_FOR_POD_TO_BE_REACHABLE": true}}, Waiting{On: true, Source: "[runners.feature_flags]"}},
		{Runner{FeatureFlags: map[string]bool{"FF_WAIT_FOR_POD_TO_BE_REACHABLE": false}}, Waiting{On: false, Source: "[runners.feature_flags]"}},
		{Runner{Environment: []string{"FF_WAIT_FOR_POD_TO_BE_REACHABLE=true"}}, Waiting{On: true, Source: "[[runners]] environment"}},
		// feature_flags wins over a variable (common/build_settings.go, v19.3.0).
		{Runner{FeatureFlags: map[string]bool{"FF_WAIT_FOR_POD_TO_BE_REACHABLE": false}, Environment: []string{"FF_WAIT_FOR_POD_TO_BE_REACHABLE=true"}},
			Waiting{On: false, Source: "[runners.feature_flags]"}},
	} {
		if got := WaitsForReachable(&tc.r); got != tc.want {
			t.Errorf("%v %v: got %+v, want %+v", tc.r.FeatureFlags, tc.r.Environment, got, tc.want)
		}
	}
}
