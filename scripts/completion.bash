# bash completion for trnslurm: subcommands, their options, stage names, bundled recipe names
# and chain ids. Installed as share/bash-completion/completions/trnslurm; to try it from a
# checkout: `source scripts/completion.bash`.
#
# Options are read from `trnslurm COMMAND --help` when completing, so they never drift from the
# binary; recipe names come from `trnslurm recipes`, instance types from `trnslurm instances`,
# chain ids from `trnslurm list` (and, when
# Slurm cannot be asked, from the run directories themselves).

_trnslurm_commands="init recipes instances plan submit status watch logs cancel list report cache export env doctor"
_trnslurm_stages="convert precompile train convert_back"

# The trnslurm being completed: the word the user typed when it runs, else the one on PATH.
_trnslurm_bin() {
  local bin=${COMP_WORDS[0]}
  bin=${bin/#\~/$HOME}
  if [[ $bin == */* && -x $bin ]]; then
    printf '%s\n' "$bin"
  else
    printf '%s\n' trnslurm
  fi
}

# The options of one subcommand (or of trnslurm itself), from its --help.
_trnslurm_options() {
  local bin=$1 cmd=$2
  # CLI11 prints each option on a line of its own: "  -r,--recipe PATH   Recipe file ...".
  "$bin" ${cmd:+"$cmd"} --help 2>/dev/null |
    sed -n 's/^  \(-[^ ]*\).*/\1/p' |
    tr ',' '\n' |
    sed -n 's/^\(--\{0,1\}[A-Za-z][-A-Za-z]*\).*/\1/p'
}

# Chain ids of the runs directory the command line names (--runs-dir, -r/--recipe).
_trnslurm_chains() {
  local bin=$1
  shift
  local words=("$@") args=() i
  for ((i = 0; i < ${#words[@]}; i++)); do
    case ${words[i]} in
    --runs-dir | -r | --recipe) args+=("${words[i]}" "${words[i + 1]}") ;;
    --runs-dir=* | --recipe=*) args+=("${words[i]}") ;;
    esac
  done
  local ids
  ids=$("$bin" list --json "${args[@]}" 2>/dev/null | sed -n 's/^ *"chain_id": "\([^"]*\)".*/\1/p')
  if [[ -z $ids ]]; then
    # Slurm unreachable: the run directories are named after their chains.
    local dir=runs
    for ((i = 0; i < ${#args[@]}; i++)); do
      case ${args[i]} in
      --runs-dir) dir=${args[i + 1]} ;;
      --runs-dir=*) dir=${args[i]#--runs-dir=} ;;
      esac
    done
    ids=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*-[0-9]*-*' -printf '%f\n' 2>/dev/null | sort)
  fi
  printf '%s\n' "$ids"
}

_trnslurm() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=''
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  local bin
  bin=$(_trnslurm_bin)
  COMPREPLY=()

  local cmd='' i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ " $_trnslurm_commands " == *" ${COMP_WORDS[i]} "* ]]; then
      cmd=${COMP_WORDS[i]}
      break
    fi
  done
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$(_trnslurm_options "$bin" "")" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "$_trnslurm_commands" -- "$cur")
    fi
    return 0
  fi

  # The value of the option before the cursor.
  case $prev in
  --stage | --only | --from | --until)
    mapfile -t COMPREPLY < <(compgen -W "$_trnslurm_stages" -- "$cur")
    return 0
    ;;
  --stage-arg)
    mapfile -t COMPREPLY < <(compgen -W "${_trnslurm_stages// /= }=" -- "$cur")
    compopt -o nospace 2>/dev/null
    return 0
    ;;
  --trn-env) mapfile -t COMPREPLY < <(compgen -W "on off" -- "$cur") && return 0 ;;
  --trn-launch) mapfile -t COMPREPLY < <(compgen -W "torchrun auto" -- "$cur") && return 0 ;;
  --trn-efa) mapfile -t COMPREPLY < <(compgen -W "auto on off" -- "$cur") && return 0 ;;
  --trn-cores) mapfile -t COMPREPLY < <(compgen -W "per-node per-task auto" -- "$cur") && return 0 ;;
  --by) mapfile -t COMPREPLY < <(compgen -W "time cost" -- "$cur") && return 0 ;;
  --precompile) mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur") && return 0 ;;
  --to) mapfile -t COMPREPLY < <(compgen -W "aws-batch k8s" -- "$cur") && return 0 ;;
  --key)
    # The keys of ./trnslurm.toml's compile cache.
    mapfile -t COMPREPLY < <(compgen -W "$("$bin" cache list --json 2>/dev/null |
      sed -n 's/^    "key": "\([0-9a-f]*\)".*/\1/p')" -- "$cur")
    return 0
    ;;
  -r | --recipe | -o | --output | --dataset | --plugstack)
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return 0
    ;;
  --from-run)
    mapfile -t COMPREPLY < <(compgen -W "latest $(_trnslurm_chains "$bin" "${COMP_WORDS[@]:1}")" -- "$cur")
    return 0
    ;;
  --runs-dir | --root | --trn-cache | --cache-dir | --mount)
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -d -- "$cur")
    return 0
    ;;
  --set | --nodes | --epochs | --samples | --tokens | --partition | --account | --qos | --sbatch-arg | \
    --interval | --node-name | --tasks-per-node | --node-rank | --local-id | --nodelist | --trn-root-comm | \
    --nodes-max | --mbs-max | --top | --efficiency | --apply | --image | --job-queue | --vcpus | --memory-mib | \
    --namespace | --volume-claim)
    return 0 # a value only the user knows
    ;;
  esac

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_trnslurm_options "$bin" "$cmd")" -- "$cur")
    return 0
  fi
  case $cmd in
  init | recipes)
    mapfile -t COMPREPLY < <(compgen -W "$("$bin" recipes 2>/dev/null | cut -d' ' -f1)" -- "$cur")
    ;;
  instances)
    # The table's first column, without its heading and the legend after the blank line.
    mapfile -t COMPREPLY < <(compgen -W "$("$bin" instances 2>/dev/null | sed -n '2,/^$/ s/ .*//p')" -- "$cur")
    ;;
  cache) mapfile -t COMPREPLY < <(compgen -W "list clear key" -- "$cur") ;;
  status | watch | logs | cancel | report)
    mapfile -t COMPREPLY < <(compgen -W "$(_trnslurm_chains "$bin" "${COMP_WORDS[@]:1}")" -- "$cur")
    ;;
  esac
  return 0
}

complete -F _trnslurm trnslurm
