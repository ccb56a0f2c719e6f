#!/usr/bin/env bash
# A stand-in for DxDispatch in tests/test_suite.cpp: takes DxDispatch's arguments
# (MODEL --output_path DIR --dml_feature_level L [more]) and answers each case of a dmlref suite
# from the case's own case.json the way a conformant DirectML device run through DxDispatch would:
# a valid case writes its expected files under their result names and exits 0; an invalid one
# prints DxDispatch's message for the stage at which DirectML refuses it and exits with that
# stage's code (create: 62, the low byte of 0x8007023E; bind: 5). FAKE_DX_MODE makes it misbehave:
#   parse-fail   "Failed to parse the model", exit 255, for every case
#   no-device    "Failed to create a device", exit 1 (as E_FAIL's low byte would be)
#   wrong-stage  invalid cases fail at the other stage
#   exit1        invalid cases exit 1 with no message; valid ones as a correct device
#   accept       invalid cases exit 0
#   crash        every case dies of SIGSEGV
#   hang         every case sleeps for 60 seconds
# FAKE_DX_ARGS, when set, names a file that collects each call's arguments after the model.
set -u
model=$1
shift
out=
while [ $# -gt 0 ]; do
  case $1 in
    --output_path) out=$2; shift 2 ;;
    *) [ -n "${FAKE_DX_ARGS:-}" ] && printf '%s\n' "$1" >>"$FAKE_DX_ARGS"; shift ;;
  esac
done
dir=$(dirname "$model")
mode=${FAKE_DX_MODE:-correct}
case $mode in
  parse-fail) echo "Failed to parse the model: $model"; exit 255 ;;
  no-device) echo "Failed to create a device"; exit 1 ;;
  crash) kill -SEGV $$ ;;
  hang) sleep 60; exit 0 ;;
esac
if grep -q '"valid": true' "$dir/case.json"; then
  # The outputs, in order: each "result" name and its "expected" file.
  paste -d ' ' <(sed -n 's/.*"result": "\([^"]*\)".*/\1/p' "$dir/case.json") \
    <(sed -n 's/.*"expected": "\([^"]*\)".*/\1/p' "$dir/case.json") |
    while read -r result expected; do cp "$dir/$expected" "$out/$result"; done
  echo "Dispatch 'op': 1 iterations"
  exit 0
fi
stage=create
grep -q '"stage": "bind"' "$dir/case.json" && stage=bind
if [ "$mode" = wrong-stage ]; then
  if [ $stage = create ]; then stage=bind; else stage=create; fi
fi
case $mode in
  exit1) exit 1 ;;
  accept) echo "Dispatch 'op': 1 iterations"; exit 0 ;;
esac
if [ $stage = bind ]; then
  echo "ERROR while binding resources: the device was removed"
  exit 5
fi
echo "ERROR creating dispatchable 'op': The parameter is incorrect."
exit 62
