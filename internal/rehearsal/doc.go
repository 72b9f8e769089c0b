// Package rehearsal holds the checks of the deployment rehearsal (scripts/rehearse.sh, run by
// `make rehearse` and `make test`): the script deploys the CDK stack into a local AWS emulator,
// and TestDeployment reads the deployment back and compares it with what the code needs,
// taken from the code itself: service.Functions (each function's variables and queue), the
// store's table, the scheduler's jobs. Without the script (OPENVITALS_REHEARSAL_STACK unset)
// the test is skipped.
package rehearsal
