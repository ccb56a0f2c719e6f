// The runner scripts `generate` writes into a suite: run_suite.sh (bash, on WSL or Linux) and
// run_suite.ps1 (PowerShell, on Windows). Both follow the protocol of docs/suite.md and must stay in
// step: the same options (--timeout/-Timeout, --filter/-Filter, --jobs/-Jobs), the same refusals
// (RESULTS that is the suite, inside it, or contains it: exit 2, nothing touched), the same files
// per case (RESULTS/<op>/<case>/exit_code, log.txt, the outputs), and deletion of nothing but those
// files of an earlier run. @LEVEL@ stands for DxDispatch's --dml_feature_level value ("5.0").
#pragma once

#include <string>

namespace dmlref_suite {

inline constexpr const char* kBashRunner = R"SH(#!/usr/bin/env bash
# Runs the cases of this suite through DxDispatch (or any program taking DxDispatch's arguments)
# and records per case RESULTS/<op>/<case>/exit_code (the exit code, or the word timeout),
# log.txt (the program's stdout and stderr) and the output files its writeFile commands write.
# usage: run_suite.sh DXDISPATCH RESULTS [--timeout SECONDS] [--filter REGEX] [--jobs N]
#                     [-- more DxDispatch arguments...]
#   --timeout SECONDS  kill a case that runs longer (default 300; 0: no limit); recorded as timeout
#   --filter REGEX     run only the cases whose <op>/<case> matches (bash's =~, extended regex)
#   --jobs N           run N cases at once (default 1)
# Arguments it does not know (e.g. -a 1, -d) go to DxDispatch, as does everything after --.
set -u
usage() {
  echo "usage: $0 DXDISPATCH RESULTS [--timeout SECONDS] [--filter REGEX] [--jobs N] [-- DxDispatch arguments...]" >&2
  exit 2
}
fail() {
  echo "$0: $*" >&2
  exit 2
}
[ $# -ge 2 ] || usage
dx=$1
results=$2
shift 2
timeout_s=300
filter=
jobs=1
dx_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
    --timeout=*) timeout_s=${1#*=}; shift ;;
    --filter) [ $# -ge 2 ] || usage; filter=$2; shift 2 ;;
    --filter=*) filter=${1#*=}; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#*=}; shift ;;
    --) shift; dx_args+=("$@"); break ;;
    *) dx_args+=("$1"); shift ;;
  esac
done
case $timeout_s in ''|*[!0-9]*) fail "--timeout '$timeout_s' is not a whole number of seconds" ;; esac
case $jobs in ''|*[!0-9]*|0) fail "--jobs '$jobs' is not a positive whole number" ;; esac
if [ -n "$filter" ]; then
  [[ "" =~ $filter ]]
  [ $? -eq 2 ] && fail "--filter '$filter' is not a regular expression"
fi
if [ "$timeout_s" -gt 0 ] && ! command -v timeout >/dev/null 2>&1; then
  fail "--timeout needs the timeout command (coreutils); give --timeout 0 to run without a limit"
fi
suite=$(cd "$(dirname "$0")" && pwd -P) || fail "cannot find the suite's directory"

# A path made absolute with its symlinks resolved, whether or not it exists yet; fails on a
# '.' or '..' in the part that does not exist.
resolve() {
  local p=$1 rest= part
  case $p in /*) ;; *) p=$PWD/$p ;; esac
  while [ ! -d "$p" ]; do
    part=${p##*/}
    p=${p%/*}
    [ -n "$p" ] || p=/
    case $part in
      '') ;;
      .|..) return 1 ;;
      *) rest=/$part$rest ;;
    esac
  done
  (cd "$p" && printf '%s%s\n' "$(pwd -P)" "$rest")
}

# Results never mix with the suite: RESULTS may not be it, lie inside it, or contain it.
results_abs=$(resolve "$results") || fail "RESULTS '$results': give it without '.' or '..' in the part that does not exist yet"
[ "$results_abs" = / ] && fail "RESULTS '$results' is the root directory, which contains the suite"
case "$results_abs/" in
  "$suite"/*) fail "RESULTS '$results' is the suite or inside it ($suite); give a directory outside it" ;;
esac
case "$suite/" in
  "$results_abs"/*) fail "RESULTS '$results' contains the suite ($suite); give a directory outside it" ;;
esac
mkdir -p "$results_abs" || fail "cannot create RESULTS '$results'"

cases=()
while IFS= read -r model; do
  case_dir=${model#"$suite"/}
  case_dir=${case_dir%/model.json}
  if [ -n "$filter" ] && ! [[ $case_dir =~ $filter ]]; then continue; fi
  cases+=("$case_dir")
done < <(find "$suite" -mindepth 3 -maxdepth 3 -name model.json -type f | LC_ALL=C sort)

run_case() {
  local case_dir=$1 out=$results_abs/$1 model=$suite/$1/model.json code start target real
  mkdir -p "$out" || return 1
  real=$(cd "$out" && pwd -P) || return 1
  case "$real/" in
    "$suite"/*) echo "$0: skipping $case_dir: $out leads into the suite" >&2; return 1 ;;
  esac
  # Only the files of an earlier run of this case: exit_code, log.txt and the model's outputs.
  rm -f -- "$out/exit_code" "$out/log.txt"
  while IFS= read -r target; do
    case $target in ''|.|..|*/*|*\\*) ;; *) rm -f -- "$out/$target" ;; esac
  done < <(sed -n 's/.*"targetPath": "\([^"]*\)".*/\1/p' "$model")
  start=$SECONDS
  if [ "$timeout_s" -gt 0 ]; then
    timeout -k 10 "$timeout_s" "$dx" "$model" --output_path "$out" --dml_feature_level @LEVEL@ \
      ${dx_args[@]+"${dx_args[@]}"} >"$out/log.txt" 2>&1 </dev/null
    code=$?
    # 124: timeout stopped it; 137: it ignored SIGTERM and was killed 10 s later.
    if [ $code -eq 124 ] || { [ $code -eq 137 ] && [ $((SECONDS - start)) -ge "$timeout_s" ]; }; then
      code=timeout
    fi
  else
    "$dx" "$model" --output_path "$out" --dml_feature_level @LEVEL@ \
      ${dx_args[@]+"${dx_args[@]}"} >"$out/log.txt" 2>&1 </dev/null
    code=$?
  fi
  printf '%s\n' "$code" >"$out/exit_code"
}

trap 'kill $(jobs -p) 2>/dev/null; exit 130' INT TERM
count=0
running=0
for case_dir in ${cases[@]+"${cases[@]}"}; do
  if [ "$jobs" -gt 1 ]; then
    run_case "$case_dir" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n 2>/dev/null || wait
      running=$((running - 1))
    fi
  else
    run_case "$case_dir"
  fi
  count=$((count + 1))
done
wait
echo "ran $count cases into $results_abs; check them with:"
echo "  dmlref-check verify '$suite' --results '$results_abs'"
)SH";

inline constexpr const char* kPowerShellRunner = R"PS(# Runs the cases of this suite through DxDispatch (or any program taking DxDispatch's arguments)
# and records per case RESULTS\<op>\<case>\exit_code (the exit code, or the word timeout),
# log.txt (the program's output: with -Timeout 0 -Jobs 1 as printed, else its stdout, then its
# stderr) and the output files its writeFile commands write.
# usage: .\run_suite.ps1 -DxDispatch C:\path\to\dxdispatch.exe -Results C:\results
#          [-Timeout SECONDS] [-Filter REGEX] [-Jobs N] [-ExtraArgs @('-a', '1')]
#   -Timeout SECONDS  kill a case that runs longer (default 300; 0: no limit); recorded as timeout
#   -Filter REGEX     run only the cases whose <op>/<case> matches (.NET regex, case-sensitive)
#   -Jobs N           run N cases at once (default 1)
# The same protocol as run_suite.sh (keep the two in step).
param(
  [Parameter(Mandatory = $true)][string]$DxDispatch,
  [Parameter(Mandatory = $true)][string]$Results,
  [int]$Timeout = 300,
  [string]$Filter = '',
  [int]$Jobs = 1,
  [string[]]$ExtraArgs = @()
)
Set-StrictMode -Version 2
$ErrorActionPreference = 'Stop'

function Fail([string]$message) {
  [Console]::Error.WriteLine("run_suite.ps1: $message")
  exit 2
}

if ($Timeout -lt 0) { Fail "-Timeout $Timeout is negative" }
if ($Jobs -lt 1) { Fail "-Jobs $Jobs is not a positive whole number" }
if ($Filter -ne '') {
  try { [void][regex]::new($Filter) } catch { Fail "-Filter '$Filter' is not a regular expression" }
}
$dxCommand = Get-Command -Name $DxDispatch -CommandType Application -ErrorAction SilentlyContinue |
  Select-Object -First 1
if ($null -eq $dxCommand) { Fail "cannot find the program '$DxDispatch'" }
$dxPath = $dxCommand.Path

# Results never mix with the suite: RESULTS may not be it, lie inside it, or contain it. (Paths
# are compared as written, made absolute; junctions and symlinks are not resolved.)
$sep = [System.IO.Path]::DirectorySeparatorChar
$ignoreCase = [System.StringComparison]::OrdinalIgnoreCase
$suite = [System.IO.Path]::GetFullPath($PSScriptRoot).TrimEnd('\', '/')
$cwd = (Get-Location -PSProvider FileSystem).ProviderPath
$resultsPath = [System.IO.Path]::GetFullPath([System.IO.Path]::Combine($cwd, $Results)).TrimEnd('\', '/')
if ($resultsPath.Equals($suite, $ignoreCase) -or $resultsPath.StartsWith($suite + $sep, $ignoreCase)) {
  Fail "-Results '$Results' is the suite or inside it ($suite); give a directory outside it"
}
if ($resultsPath.Length -eq 0 -or ($suite + $sep).StartsWith($resultsPath + $sep, $ignoreCase)) {
  Fail "-Results '$Results' contains the suite ($suite); give a directory outside it"
}
[void][System.IO.Directory]::CreateDirectory($resultsPath)

$cases = New-Object System.Collections.Generic.List[string]
$opDirs = [System.IO.Directory]::GetDirectories($suite)
[Array]::Sort($opDirs, [System.StringComparer]::Ordinal)
foreach ($opDir in $opDirs) {
  $caseDirs = [System.IO.Directory]::GetDirectories($opDir)
  [Array]::Sort($caseDirs, [System.StringComparer]::Ordinal)
  foreach ($caseDir in $caseDirs) {
    if (-not [System.IO.File]::Exists([System.IO.Path]::Combine($caseDir, 'model.json'))) { continue }
    $name = [System.IO.Path]::GetFileName($opDir) + '/' + [System.IO.Path]::GetFileName($caseDir)
    if ($Filter -ne '' -and $name -cnotmatch $Filter) { continue }
    $cases.Add($name)
  }
}

# One argument quoted for a Windows command line (CommandLineToArgvW's rules).
function Quote-Argument([string]$text) {
  if ($text -ne '' -and $text -notmatch '[\s"]') { return $text }
  $backslash = [char]92
  $builder = New-Object System.Text.StringBuilder
  [void]$builder.Append('"')
  $slashes = 0
  foreach ($ch in $text.ToCharArray()) {
    if ($ch -eq $backslash) { $slashes++; continue }
    if ($ch -eq '"') { [void]$builder.Append($backslash, 2 * $slashes + 1) }
    elseif ($slashes -gt 0) { [void]$builder.Append($backslash, $slashes) }
    $slashes = 0
    [void]$builder.Append($ch)
  }
  if ($slashes -gt 0) { [void]$builder.Append($backslash, 2 * $slashes) }
  [void]$builder.Append('"')
  return $builder.ToString()
}

# A case's paths, with the files of an earlier run of it deleted: exit_code, log.txt and the
# model's outputs, nothing else.
function Initialize-Case([string]$name) {
  $parts = $name.Split('/')
  $model = [System.IO.Path]::Combine($suite, $parts[0], $parts[1], 'model.json')
  $out = [System.IO.Path]::Combine($resultsPath, $parts[0], $parts[1])
  [void][System.IO.Directory]::CreateDirectory($out)
  $targets = @((Get-Content -LiteralPath $model -Raw | ConvertFrom-Json).commands |
    Where-Object { $_.type -eq 'writeFile' } | ForEach-Object { [string]$_.targetPath })
  foreach ($file in @('exit_code', 'log.txt') + $targets) {
    if ($file -eq '' -or $file -eq '.' -or $file -eq '..' -or $file -match '[/\\]') { continue }
    $path = [System.IO.Path]::Combine($out, $file)
    if ([System.IO.File]::Exists($path)) { [System.IO.File]::Delete($path) }
  }
  return [pscustomobject]@{
    Model = $model
    Out = $out
    Log = [System.IO.Path]::Combine($out, 'log.txt')
    ExitCode = [System.IO.Path]::Combine($out, 'exit_code')
  }
}

function Start-Case([string]$name) {
  $case = Initialize-Case $name
  $model = $case.Model
  $out = $case.Out
  $arguments = @($model, '--output_path', $out, '--dml_feature_level', '@LEVEL@') + $ExtraArgs
  $info = New-Object System.Diagnostics.ProcessStartInfo
  $info.FileName = $dxPath
  $info.Arguments = (@($arguments | ForEach-Object { Quote-Argument $_ })) -join ' '
  $info.UseShellExecute = $false
  $info.RedirectStandardOutput = $true
  $info.RedirectStandardError = $true
  $info.CreateNoWindow = $true
  $process = [System.Diagnostics.Process]::Start($info)
  return [pscustomobject]@{
    Out = $out
    Process = $process
    Stdout = $process.StandardOutput.ReadToEndAsync()
    Stderr = $process.StandardError.ReadToEndAsync()
    Clock = [System.Diagnostics.Stopwatch]::StartNew()
  }
}

function Complete-Case($run, [bool]$timedOut) {
  if ($timedOut) {
    try { $run.Process.Kill($true) } catch { try { $run.Process.Kill() } catch { } }
    [void]$run.Process.WaitForExit(10000)
  } else {
    $run.Process.WaitForExit()
  }
  $log = ''
  foreach ($task in @($run.Stdout, $run.Stderr)) {
    if ($task.Wait(10000)) { $log += $task.Result }
  }
  [System.IO.File]::WriteAllText([System.IO.Path]::Combine($run.Out, 'log.txt'), $log)
  if ($timedOut) { $code = 'timeout' } else { $code = [string]$run.Process.ExitCode }
  [System.IO.File]::WriteAllText([System.IO.Path]::Combine($run.Out, 'exit_code'), "$code`n")
  $run.Process.Dispose()
}

$count = 0
if ($Timeout -eq 0 -and $Jobs -eq 1) {
  # No limit to watch and one case at a time: each runs in the foreground, and log.txt keeps
  # DxDispatch's output in the order it printed it.
  foreach ($name in $cases) {
    $case = Initialize-Case $name
    $ErrorActionPreference = 'Continue'  # a native program's stderr is its log, not an error here
    & $DxDispatch $case.Model --output_path $case.Out --dml_feature_level @LEVEL@ @ExtraArgs 2>&1 |
      ForEach-Object { "$_" } | Out-File -Encoding utf8 -LiteralPath $case.Log
    $code = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    [System.IO.File]::WriteAllText($case.ExitCode, "$code`n")
    $count++
  }
} else {
  # Up to -Jobs cases at once, each killed when it runs past -Timeout.
  $queue = New-Object System.Collections.Generic.Queue[string]
  foreach ($name in $cases) { $queue.Enqueue($name) }
  $running = New-Object System.Collections.Generic.List[object]
  while ($queue.Count -gt 0 -or $running.Count -gt 0) {
    while ($queue.Count -gt 0 -and $running.Count -lt $Jobs) {
      $running.Add((Start-Case $queue.Dequeue()))
      $count++
    }
    for ($i = $running.Count - 1; $i -ge 0; $i--) {
      $run = $running[$i]
      if ($run.Process.HasExited) {
        Complete-Case $run $false
        $running.RemoveAt($i)
      } elseif ($Timeout -gt 0 -and $run.Clock.Elapsed.TotalSeconds -ge $Timeout) {
        Complete-Case $run $true
        $running.RemoveAt($i)
      }
    }
    if ($running.Count -gt 0) { Start-Sleep -Milliseconds 20 }
  }
}
Write-Output "ran $count cases into $resultsPath; check them with:"
Write-Output "  dmlref-check verify '$suite' --results '$resultsPath'"
)PS";

// The script with the feature level filled in.
inline std::string runner_text(const char* script, const std::string& dx_level) {
  std::string s = script;
  for (std::size_t at; (at = s.find("@LEVEL@")) != std::string::npos;) s.replace(at, 7, dx_level);
  return s;
}

}  // namespace dmlref_suite
