package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	rev := "85ee632abcdef0123456789abcdef0123456789a"
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{}, "(devel)"},
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: set("vcs.revision", rev, "vcs.time", "2026-11-30T23:00:00Z", "vcs.modified", "true")},
			"(devel) 85ee632abcde+dirty 2026-11-30T23:00:00Z"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: set("vcs.revision", rev, "vcs.modified", "false")},
			"(devel) 85ee632abcde"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130230000-85ee632abcde+dirty"}, Settings: set("vcs.revision", rev, "vcs.modified", "true")},
			"v0.0.0-20261130230000-85ee632abcde+dirty"},
	} {
		if got := buildVersion(&tc.bi); got != tc.want {
			t.Errorf("buildVersion(%+v) = %q, want %q", tc.bi.Main, got, tc.want)
		}
	}
}
