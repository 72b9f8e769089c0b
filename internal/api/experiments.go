package api

import (
	"net/http"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
)

// experimentJSON is an experiment as the API shows it: model.Experiment's JSON, and a completed
// one's comparison.
type experimentJSON struct {
	model.Experiment
	Metrics []compare.Metric `json:"metrics,omitempty"`
	Loads   *loadsJSON       `json:"loads,omitempty"`
}

func toExperimentJSON(e model.Experiment) experimentJSON {
	out := experimentJSON{Experiment: e}
	out.Created = e.Created.UTC()
	if e.Control != nil && e.Measured != nil {
		base := compare.Audit{Metrics: e.Control.Metrics, Samples: e.Control.Samples}
		target := compare.Audit{Metrics: e.Measured.Metrics, Samples: e.Measured.Samples}
		out.Metrics = withUnits(compare.Metrics(base, target, regression.SourceMetrics[regression.SourceLab]))
	}
	return out
}

// createExperiment queues an experiment on one of the website's pages: two audits of the
// day's on-demand audits (its control and itself).
func (s *Server) createExperiment(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[model.ExperimentRequest](s, w, r, c)
	if err != nil {
		return err
	}
	e, err := in.Experiment(func(id string) error {
		_, err := s.store.Page(r.Context(), site, id)
		return err
	})
	if err != nil {
		return err
	}
	err = s.takeAudits(r.Context(), site, 2, func() (int, error) {
		if err := s.auditor.Experiment(r.Context(), site, &e); err != nil {
			return 0, err
		}
		return 2, nil
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, toExperimentJSON(e))
}

// experimentKind is how experiments are listed and deleted; one is created by createExperiment
// (it is queued) and shown by getExperiment (with its comparison). One is deleted whatever its
// status: its diagnostics' objects are purged after it, and what a worker still running it
// stores meanwhile goes with the purge's later passes.
func (s *Server) experimentKind() itemKind[model.Experiment, model.ExperimentRequest] {
	return itemKind[model.Experiment, model.ExperimentRequest]{
		pathID: "experimentID",
		list:   s.store.Experiments,
		remove: s.purging(s.store.DeleteExperiment),
		show:   showing(toExperimentJSON),
	}
}

func (s *Server) getExperiment(w http.ResponseWriter, r *http.Request, c caller) error {
	_, e, err := websiteAnd(s, r, c, withPathID(r, "experimentID", s.store.Experiment))
	if err != nil {
		return err
	}
	out := toExperimentJSON(e)
	if e.Control != nil && e.Measured != nil {
		base, err := s.diagnosticsOrNone(r.Context(), e.Control.ReportKey)
		if err != nil {
			return err
		}
		target, err := s.diagnosticsOrNone(r.Context(), e.Measured.ReportKey)
		if err != nil {
			return err
		}
		if base != nil && target != nil {
			// The frames' images are kept, but served for pages' days only: times here.
			noImage := func(model.Frame) string { return "" }
			out.Loads = toLoadsJSON(compare.CompareLoads(base, target, compare.DefaultThresholds), noImage, noImage)
		}
	}
	return writeJSON(w, http.StatusOK, out)
}
