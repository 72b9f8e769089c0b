// Command infra is the openvitals CDK app: `cdk deploy` (from the repository root, through
// cdk.json and infra/cdk-app.sh) runs it to synthesize the CloudFormation template.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	// Stops the jsii Node.js child process when the app is done.
	defer jsii.Close()

	app := awscdk.NewApp(nil)

	// No Env: the stack is environment-agnostic, so `cdk deploy` targets
	// whatever account and region the caller's credentials select.
	// Settings left out here come from the context (`cdk deploy -c dailyHourUtc=5`).
	_, err := newOpenvitalsStack(app, "OpenvitalsStack", &openvitalsStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("openvitals: self-hosted web-performance monitoring"),
		},
	})
	if err != nil {
		jsii.Close()
		fmt.Fprintln(os.Stderr, "openvitals stack:", err)
		os.Exit(1)
	}

	app.Synth(nil)
}
