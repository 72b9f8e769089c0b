#!/usr/bin/env bash
# The deployment rehearsal (`make rehearse`, and a step of `make test`): deploys the real CDK
# app, as `make deploy` would, into a local AWS emulator (moto in server mode) and checks that
# what was deployed is what the code needs. It needs `make synth` first (the Makefile's
# rehearse target runs it), and neither AWS credentials nor a Docker engine.
#
#   1. cfn-lint on the synthesized template: any error fails (warnings are printed).
#   2. moto_server on a free port of 127.0.0.1 (installed, pinned, into a virtual environment
#      under .run/ where the machine has none).
#   3. `cdk bootstrap`, then `cdk deploy` of a copy of the cloud assembly, patched where the
#      emulator falls short (each patch below says why: the browser image, the secrets, the FIFO
#      queues' names, the RUM function's URL); the template and the function code are the ones
#      `make deploy` would send.
#   4. internal/rehearsal's test reads the deployment back from the emulator and compares it
#      with the code: every function of functions/ with its architecture, memory, timeout and
#      every variable service.Functions says it needs; each queue's event source mapping,
#      batch size, redrive and visibility timeout against its consumer's timeout; the table's
#      keys, TTL attribute and indexes against the store's; the daily schedules; the exports'
#      bucket, Glue database, tables (columns, day projection, locations) and Athena workgroup,
#      read back from the emulator's Glue and Athena.
#
# What the emulator does not create (the HTTP API and its routes, the alarms, the queue and
# bucket policies) is left to infra's template tests, and what only AWS can tell (quotas, IAM
# evaluated for real, the image built and run by Lambda) to a deploy into an account.
#
# Environment: CDK_NODE (the Node that runs the CDK CLI; default the browser layer's Node 22),
# OPENVITALS_REHEARSAL_PORT (default: a free port).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
run=$root/.run/rehearsal
stack=OpenvitalsStack
template=infra/cdk.out/$stack.template.json
# moto's default account; the region every resource is created in.
account=123456789012
region=us-east-1
# The pinned emulator and linter, for machines that do not have them.
moto_pin='moto[server]==5.2.1'
cfnlint_pin='cfn-lint==1.51.0'

die() {
	echo "rehearse: $*" >&2
	exit 1
}
say() { echo "rehearse: $*"; }

[ -f "$template" ] || die "$template is missing: run make synth first"
start=$(date +%s)
mkdir -p "$run"

# ---- the tools ------------------------------------------------------------------------------
# moto, cfn-lint and boto3 (for the patches) from the machine, else from a virtual environment
# of this checkout with the pinned versions.
venv=$root/.run/moto-venv
py=python3
if ! command -v moto_server >/dev/null || ! command -v cfn-lint >/dev/null || ! python3 -c 'import boto3' 2>/dev/null; then
	if [ ! -x "$venv/bin/moto_server" ] || [ ! -x "$venv/bin/cfn-lint" ]; then
		say "installing $moto_pin and $cfnlint_pin into $venv"
		python3 -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
		"$venv/bin/pip" install --quiet "$moto_pin" "$cfnlint_pin" ||
			die "pip could not install $moto_pin $cfnlint_pin (is PyPI reachable?)"
	fi
	PATH=$venv/bin:$PATH
	py=$venv/bin/python
fi

# ---- 1. cfn-lint ----------------------------------------------------------------------------
# Exit status bits: 2 errors, 4 warnings, 8 informational. CDK's templates carry warnings of its
# own making (redundant DependsOn), so only errors fail.
set +e
cfn-lint --format parseable -- "$template" >"$run/cfn-lint.txt"
lint=$?
set -e
if [ $((lint & 2)) -ne 0 ] || [ $((lint & ~14)) -ne 0 ]; then
	grep -E ':E[0-9]+:' "$run/cfn-lint.txt" >&2 || cat "$run/cfn-lint.txt" >&2
	die "cfn-lint found errors in $template (exit status $lint)"
fi
say "cfn-lint: no error ($(grep -c ':W[0-9]*:' "$run/cfn-lint.txt" || true) warnings, in $run/cfn-lint.txt)"

# ---- 2. the emulator ------------------------------------------------------------------------
port=${OPENVITALS_REHEARSAL_PORT:-$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
moto_pid=
stop() {
	if [ -n "$moto_pid" ]; then
		kill "$moto_pid" 2>/dev/null || true
		wait "$moto_pid" 2>/dev/null || true
	fi
}
trap stop EXIT
moto_server -H 127.0.0.1 -p "$port" >"$run/moto.log" 2>&1 &
moto_pid=$!
# The endpoint's host is "localhost", not 127.0.0.1: moto's CloudFormation reads the bucket of
# a TemplateURL (CDK uploads large templates to its bootstrap bucket) from the URL's path only
# when the host is localhost, and from the host name otherwise.
endpoint=http://localhost:$port
for _ in $(seq 1 100); do
	curl -sf -o /dev/null "$endpoint/moto-api/" && break
	kill -0 "$moto_pid" 2>/dev/null || die "moto_server stopped: $(tail -5 "$run/moto.log")"
	sleep 0.1
done
curl -sf -o /dev/null "$endpoint/moto-api/" || die "moto_server did not answer on port $port"
say "moto_server on 127.0.0.1:$port (pid $moto_pid)"

# Only the emulator: no profile, credentials or per-service endpoint of the host applies.
for v in $(env | grep -o '^AWS_[A-Z0-9_]*' || true); do unset "$v"; done
export AWS_ENDPOINT_URL=$endpoint AWS_REGION=$region AWS_DEFAULT_REGION=$region \
	AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_EC2_METADATA_DISABLED=true \
	AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

# ---- 3. cdk bootstrap and deploy ------------------------------------------------------------
node=${CDK_NODE:-$root/layers/browser/node_modules/.bin/node}
cdk() {
	JSII_NODE=$node "$node" "$root/.run/cdk/node_modules/aws-cdk/bin/cdk" --no-notices "$@"
}

# The copy of the cloud assembly that is deployed; infra/cdk.out stays as synthesized.
assembly=$run/assembly
rm -rf "$assembly"
cp -r infra/cdk.out "$assembly"

cdk bootstrap --app "$assembly" "aws://$account/$region" >"$run/bootstrap.log" 2>&1 ||
	{ tail -20 "$run/bootstrap.log" >&2; die "cdk bootstrap failed (log: $run/bootstrap.log)"; }
say "cdk bootstrap: done"

# The patches, each for a gap of the emulator; none changes what the stack asks of AWS.
ENDPOINT=$endpoint ASSEMBLY=$assembly STACK=$stack REGION=$region "$py" - <<'EOF'
import json, os
import boto3

endpoint, assembly, stack, region = (os.environ[k] for k in ("ENDPOINT", "ASSEMBLY", "STACK", "REGION"))
client = lambda service: boto3.client(service, endpoint_url=endpoint, region_name=region)
assets_path = os.path.join(assembly, stack + ".assets.json")
template_path = os.path.join(assembly, stack + ".template.json")
assets = json.load(open(assets_path))
template = json.load(open(template_path))
resources = template["Resources"]

# Patch 1, the browser image: building it needs a Docker engine, and the emulator's registry
# holds no layers anyway. The image asset leaves the asset manifest (so `cdk deploy` builds and
# pushes nothing), and a tag of the same name, on a placeholder manifest, is put into the
# emulator's registry, where Lambda's CreateFunction looks the image up.
ecr = client("ecr")
placeholder = {
    "schemaVersion": 2,
    "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
    "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "size": 2,
               "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
    "layers": [],
}
account = boto3.client("sts", endpoint_url=endpoint, region_name=region).get_caller_identity()["Account"]
for image in assets.pop("dockerImages", {}).values():
    for dest in image["destinations"].values():
        repo = dest["repositoryName"].replace("${AWS::AccountId}", account).replace("${AWS::Region}", region)
        ecr.put_image(repositoryName=repo, imageManifest=json.dumps(placeholder), imageTag=dest["imageTag"])
        print(f"rehearse: patch 1: image {repo}:{dest['imageTag']} stands in for the browser image")
assets["dockerImages"] = {}
json.dump(assets, open(assets_path, "w"), indent=1)

# Patch 2, the secrets: moto's CloudFormation has no AWS::SecretsManager::Secret, so a Ref to
# one resolves to nothing and the policies granting it are refused. Each secret is created
# through the Secrets Manager API instead (blank, as the stack creates the CrUX key's), and
# every Ref to it becomes its ARN.
sm = client("secretsmanager")
arns = {}
for logical_id, r in list(resources.items()):
    if r["Type"] == "AWS::SecretsManager::Secret":
        arns[logical_id] = sm.create_secret(Name=stack + "-" + logical_id, SecretString=" ")["ARN"]
        del resources[logical_id]
        print(f"rehearse: patch 2: secret {logical_id} created through the API")

def resolve(v):
    if isinstance(v, dict):
        if list(v) == ["Ref"] and v["Ref"] in arns:
            return arns[v["Ref"]]
        return {k: resolve(x) for k, x in v.items()}
    if isinstance(v, list):
        return [resolve(x) for x in v]
    return v
template = resolve(template)
resources = template["Resources"]

# Patch 3, FIFO queues: CloudFormation names an unnamed FIFO queue <generated>.fifo, moto
# generates a name without the suffix and then refuses it. Each gets a name of the same form.
for logical_id, r in resources.items():
    if r["Type"] == "AWS::SQS::Queue" and r["Properties"].get("FifoQueue"):
        r["Properties"]["QueueName"] = f"{stack}-{logical_id}"[:75] + ".fifo"
        print(f"rehearse: patch 3: FIFO queue {logical_id} named")

# Patch 4, the RUM function's URL: moto's CloudFormation has no AWS::Lambda::Url, and refuses a
# template whose functions name an attribute of one. The web function, which names the URL in
# the dashboard's snippet, gets a URL of the same form instead.
urls = {i for i, r in resources.items() if r["Type"] == "AWS::Lambda::Url"}
def unurl(v):
    if isinstance(v, dict):
        if list(v) == ["Fn::GetAtt"] and v["Fn::GetAtt"][0] in urls:
            return "https://rehearsal.lambda-url." + region + ".on.aws/"
        return {k: unurl(x) for k, x in v.items()}
    if isinstance(v, list):
        return [unurl(x) for x in v]
    return v
for logical_id, r in resources.items():
    if r["Type"] == "AWS::Lambda::Function":
        before = json.dumps(r)
        resources[logical_id] = unurl(r)
        if json.dumps(resources[logical_id]) != before:
            print(f"rehearse: patch 4: function {logical_id} names a URL in place of the RUM function's")

json.dump(template, open(template_path, "w"), indent=1)
EOF

cdk deploy --app "$assembly" --require-approval never --progress events "$stack" >"$run/deploy.log" 2>&1 ||
	{ tail -30 "$run/deploy.log" >&2; die "cdk deploy failed (log: $run/deploy.log)"; }
say "cdk deploy: done"

# Patch 5, after the deploy: moto's CloudFormation accepts AWS::Glue::Database,
# AWS::Glue::Table and AWS::Athena::WorkGroup but creates nothing for them (its Glue and Athena
# APIs have them, its CloudFormation has no model of them). Each is created through its API
# from the deployed template's own properties (their Refs and Fn::Joins resolved against the
# deployed stack), so that internal/rehearsal reads back what the template asks for, in the
# shapes Glue's and Athena's APIs take.
ENDPOINT=$endpoint ASSEMBLY=$assembly STACK=$stack REGION=$region "$py" - <<'EOF2'
import json, os
import boto3

endpoint, assembly, stack, region = (os.environ[k] for k in ("ENDPOINT", "ASSEMBLY", "STACK", "REGION"))
client = lambda service: boto3.client(service, endpoint_url=endpoint, region_name=region)
template = json.load(open(os.path.join(assembly, stack + ".template.json")))
# (moto lists some resources without their logical id: those are not referred to here.)
physical = {r["LogicalResourceId"]: r.get("PhysicalResourceId", "")
            for r in client("cloudformation").describe_stack_resources(StackName=stack)["StackResources"]
            if "LogicalResourceId" in r}
account = client("sts").get_caller_identity()["Account"]
pseudo = {"AWS::StackName": stack, "AWS::AccountId": account, "AWS::Region": region, "AWS::URLSuffix": "amazonaws.com"}

def resolve(v):
    if isinstance(v, dict):
        if "Ref" in v:
            return pseudo.get(v["Ref"]) or physical[v["Ref"]]
        if "Fn::Join" in v:
            sep, parts = v["Fn::Join"]
            return sep.join(resolve(p) for p in parts)
        return {k: resolve(x) for k, x in v.items()}
    if isinstance(v, list):
        return [resolve(x) for x in v]
    return v

glue, athena = client("glue"), client("athena")
kinds = {"AWS::Glue::Database": 0, "AWS::Glue::Table": 1, "AWS::Athena::WorkGroup": 2}
for logical_id, r in sorted(template["Resources"].items(), key=lambda kv: kinds.get(kv[1]["Type"], 9)):
    if r["Type"] not in kinds:
        continue
    props = resolve(r.get("Properties", {}))
    if r["Type"] == "AWS::Glue::Database":
        glue.create_database(DatabaseInput=props["DatabaseInput"])
    elif r["Type"] == "AWS::Glue::Table":
        glue.create_table(DatabaseName=props["DatabaseName"], TableInput=props["TableInput"])
    elif r["Type"] == "AWS::Athena::WorkGroup":
        athena.create_work_group(Name=props["Name"], Description=props.get("Description", ""),
                                 Configuration=props["WorkGroupConfiguration"])
    print(f"rehearse: patch 5: {r['Type']} {logical_id} created through the API")
EOF2

# ---- 4. the deployment against the code ------------------------------------------------------
OPENVITALS_REHEARSAL_STACK=$stack go test -count=1 -run '^TestDeployment$' ./internal/rehearsal/ ||
	die "the deployment does not give the code what it needs (see above)"
say "passed in $(($(date +%s) - start)) s"
