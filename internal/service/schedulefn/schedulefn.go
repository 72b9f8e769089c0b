// Package schedulefn builds the scheduler from the service: the wiring the scheduler function
// and the local programs (the service's clocks, make daily) share.
package schedulefn

import (
	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
)

// New builds the scheduler over the service's table and queues.
func New(svc *service.Service) *schedule.Scheduler {
	q := svc.Queues
	return schedule.New(svc.Store, schedule.Queues{Fanout: q.Fanout, Audit: q.Audit, Multistep: q.Multistep, Purge: q.Purge},
		svc.Config.PurgeSettle, svc.Log)
}
