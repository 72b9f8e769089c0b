// Command rum-batcher is the Lambda function that takes the beacon queue in large batches and
// regroups the page views per website for the RUM aggregator's FIFO queue.
package main

import (
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/rumworkerfn"
)

func main() {
	service.StartWorker("rum-batcher", rumworkerfn.Rebatcher)
}
