package service

import "testing"

// Anything but a true value keeps the production policy, so a typo fails safe.
func TestAllowPrivateTargets(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "1": true, "": false, "false": false, "yes": false} {
		t.Setenv("OPENVITALS_ALLOW_PRIVATE_TARGETS", value)
		cfg, err := ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.AllowPrivateTargets != want {
			t.Errorf("OPENVITALS_ALLOW_PRIVATE_TARGETS=%q: %v, want %v", value, cfg.AllowPrivateTargets, want)
		}
	}
}

func TestConfigRefusesBadValues(t *testing.T) {
	for name, value := range map[string]string{
		"OPENVITALS_AUDIT_RUNS": "0", "OPENVITALS_TARGET_SCHEME": "ftp",
		EnvCrUXQueriesPerMinute: "151", EnvPurgeSettle: "soon",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			if _, err := ConfigFromEnv(); err == nil {
				t.Errorf("%s=%q accepted", name, value)
			}
		})
	}
	t.Setenv("OPENVITALS_AUDIT_RUNS", "5")
	if cfg, err := ConfigFromEnv(); err != nil || cfg.AuditRuns != 5 || cfg.TargetScheme != "https" || cfg.UXQueue != "openvitals-ux" || cfg.CrUXQueriesPerMinute != CrUXQuota {
		t.Errorf("defaults and OPENVITALS_AUDIT_RUNS=5: %+v, %v", cfg, err)
	}
}
