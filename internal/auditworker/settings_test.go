package auditworker

import (
	"reflect"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

// TestSettings: a run's Lighthouse settings by method. Simulated keeps today's (Lighthouse's
// device defaults without a profile, the profile's throttling over them); applied asks for
// DevTools throttling with the preset's values as DevTools applies them and the CPU slowdown
// calibrated from the machine's benchmark index, and the waits at the end of the load openvitals
// sets (model.AppliedWaits: Lighthouse's CPU quiet window off, the runner's quiet window in its place).
func TestSettings(t *testing.T) {
	const fast = 2 * model.ReferenceBenchmarkIndex             // a machine twice the reference's speed
	slow4G := model.NetworkPresets["mobileSlow4G"].ThroughputK // as computed at run time
	slow4GDown := slow4G * model.DevtoolsThroughputFactor
	for _, tc := range []struct {
		name    string
		p       *auditProfile
		device  string
		method  string
		want    map[string]any
		wantCPU float64
	}{
		{"simulated mobile, no profile: Lighthouse's defaults", nil, "mobile", model.MethodSimulated, nil, 4},
		{"simulated desktop, no profile", nil, "desktop", model.MethodSimulated, nil, 1},
		{"simulated with a preset", &auditProfile{Profile: model.Profile{Network: "mobileRegular3G", CPUSlowdown: 6}}, "mobile", model.MethodSimulated,
			map[string]any{"throttling": map[string]any{"rttMs": 300.0, "throughputKbps": 700.0, "cpuSlowdownMultiplier": 6.0}}, 6},
		{"applied mobile, no profile", nil, "mobile", model.MethodApplied, map[string]any{
			"throttlingMethod": "devtools",
			"throttling": map[string]any{"rttMs": 150.0, "throughputKbps": 1638.4, "requestLatencyMs": 562.5,
				"downloadThroughputKbps": slow4GDown, "uploadThroughputKbps": 675.0, "cpuSlowdownMultiplier": 8.0},
			"pauseAfterFcpMs": 1000, "pauseAfterLoadMs": 1000, "networkQuietThresholdMs": 1000, "cpuQuietThresholdMs": 0,
		}, 8},
		{"applied desktop, no profile: dense 4G applied, the CPU twice as slow on a machine twice as fast", nil, "desktop", model.MethodApplied, map[string]any{
			"throttlingMethod": "devtools",
			"throttling": map[string]any{"rttMs": 40.0, "throughputKbps": 10240.0, "requestLatencyMs": 150.0,
				"downloadThroughputKbps": 9216.0, "uploadThroughputKbps": 9216.0, "cpuSlowdownMultiplier": 2.0},
			"pauseAfterFcpMs": 1000, "pauseAfterLoadMs": 1000, "networkQuietThresholdMs": 1000, "cpuQuietThresholdMs": 0,
		}, 2},
		{"applied with the profile's own values over its preset", &auditProfile{Profile: model.Profile{Network: "mobileRegular3G", RTTMs: 200, CPUSlowdown: 2, Width: 800, Height: 600}},
			"desktop", model.MethodApplied, map[string]any{
				"throttlingMethod": "devtools",
				"throttling": map[string]any{"rttMs": 200.0, "throughputKbps": 700.0, "requestLatencyMs": 750.0,
					"downloadThroughputKbps": 630.0, "uploadThroughputKbps": 630.0, "cpuSlowdownMultiplier": 4.0},
				"pauseAfterFcpMs": 1000, "pauseAfterLoadMs": 1000, "networkQuietThresholdMs": 1000, "cpuQuietThresholdMs": 0,
				"screenEmulation": map[string]any{"width": 800, "height": 600},
			}, 4},
	} {
		got, cpu := settings(tc.p, tc.device, tc.method, fast)
		if !reflect.DeepEqual(got, tc.want) || cpu != tc.wantCPU {
			t.Errorf("%s:\n got %v (CPU %v)\nwant %v (CPU %v)", tc.name, got, cpu, tc.want, tc.wantCPU)
		}
	}
}
