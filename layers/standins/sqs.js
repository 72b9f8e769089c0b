// Starts the SQS stand-in (local-aws-sqs) on 127.0.0.1:PORT. Queue re-creation is immediate
// (emulateQueueCreationLifecycle: false), so tests can create and delete queues freely.
const { createSqsServer } = require("local-aws-sqs");

const port = Number(process.argv[2] || 9324);
createSqsServer({ port, hostname: "127.0.0.1", emulateQueueCreationLifecycle: false })
  .then(() => console.log(`SQS stand-in listening on 127.0.0.1:${port}`))
  .catch((err) => { console.error(err); process.exit(1); });
