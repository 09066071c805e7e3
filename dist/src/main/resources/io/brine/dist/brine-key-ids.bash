
# Key ids and states, as salt-key's completion offers them: -a completes the pending (and, with
# --include-rejected/--include-all, other) ids, -r the pending ids, -d/-p/-f every id, -l the states. The ids are
# the file names in the pki dir (--pki-dir on the line, else pki_dir: of master.yaml in -c DIR or /etc/brine, else
# /etc/brine/pki/master); names that are not plain ids ([A-Za-z0-9._-]) are never offered. An unreadable pki dir
# (another user's: it is 0700) completes nothing.
function _brine_key_pki_dir() {
  local i config=/etc/brine pki=
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --pki-dir) pki=${COMP_WORDS[i+1]} ;;
      -c|--config-dir) config=${COMP_WORDS[i+1]} ;;
    esac
  done
  if [ -z "$pki" ] && [ -r "$config/master.yaml" ]; then
    pki=$(sed -n 's/^pki_dir:[[:space:]]*\([^#[:space:]]*\).*/\1/p' "$config/master.yaml" 2>/dev/null | tail -n 1)
    pki=${pki%\"}; pki=${pki#\"}; pki=${pki%\'}; pki=${pki#\'}
  fi
  printf '%s' "${pki:-/etc/brine/pki/master}"
}

function _brine_key_ids() {
  local pki dir name
  pki=$(_brine_key_pki_dir)
  for dir in "$@"; do
    [ -d "$pki/$dir" ] && [ -r "$pki/$dir" ] || continue
    for name in "$pki/$dir"/*; do
      name=${name##*/}
      [[ $name =~ ^[A-Za-z0-9._-]+$ ]] && [[ $name != .* ]] && printf '%s\n' "$name"
    done
  done
}

function _complete_brine-key_ids() {
  local curr_word=${COMP_WORDS[COMP_CWORD]} prev_word=${COMP_WORDS[COMP_CWORD-1]} ids=
  case ${prev_word} in
    -l|--list)
      COMPREPLY=($(compgen -W "pre un unaccepted acc accepted rej rejected den denied all" -- "${curr_word}"))
      return 0 ;;
    -a|--accept) ids=$(_brine_key_ids minions_pre minions_rejected) ;;
    -r|--reject) ids=$(_brine_key_ids minions_pre minions) ;;
    -d|--delete|-p|--print|-f|--finger)
      ids=$(_brine_key_ids minions_pre minions minions_rejected minions_denied) ;;
    *) _complete_brine-key "$@"; return $? ;;
  esac
  COMPREPLY=($(compgen -W "$(printf '%s\n' "$ids" | sort -u)" -- "${curr_word}"))
}

complete -F _complete_brine-key_ids -o default brine-key brine-key.sh brine-key.bash
