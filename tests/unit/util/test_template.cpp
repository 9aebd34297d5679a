#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "trnslurm/util/template.hpp"

using namespace trnslurm;

TEST_CASE("template: shell_quote makes one literal word") {
  CHECK(*shell_quote("abc") == "'abc'");
  CHECK(*shell_quote("") == "''");
  CHECK(*shell_quote("it's") == "'it'\\''s'");
  CHECK(*shell_quote("a b\n$x `y` \"z\"") == "'a b\n$x `y` \"z\"'");
  CHECK(*shell_quote("tab\there") == "'tab\there'");
}

TEST_CASE("template: shell_quote refuses NUL and control characters") {
  using namespace std::string_view_literals;
  auto nul = shell_quote("a\0b"sv);
  REQUIRE_FALSE(nul);
  CHECK(nul.error().what.find("NUL") != std::string::npos);
  CHECK(nul.error().where == "byte 1");
  CHECK_FALSE(shell_quote("a\rb"));
  CHECK_FALSE(shell_quote("\x1b[31m"));
  CHECK_FALSE(shell_quote("del\x7f"));
}

TEST_CASE("template: is_shell_name") {
  CHECK(is_shell_name("A_1"));
  CHECK(is_shell_name("_x"));
  CHECK_FALSE(is_shell_name("1A"));
  CHECK_FALSE(is_shell_name("A-B"));
  CHECK_FALSE(is_shell_name(""));
}

TEST_CASE("template: placeholders become references to exported variables") {
  const TemplateValues v{{"steps", "100"}, {"slurm.partition", "a b"}, {"q", "it's"}};
  std::vector<std::string> used;
  CHECK(*render_template("run --steps {{steps}} -p {{ slurm.partition }}", v, {}, Substitution::variables,
                         &used) == "run --steps \"${TRNSLURM_STEPS}\" -p \"${TRNSLURM_SLURM_PARTITION}\"");
  CHECK(used == std::vector<std::string>{"steps", "slurm.partition"});
  CHECK(*render_template("x={{q}}", v, {}, Substitution::raw) == "x=it's");
  CHECK(*render_template("no placeholders ${HOME} { } }}", v, {}) == "no placeholders ${HOME} { } }}");
  CHECK(variable_for("model.name") == "TRNSLURM_MODEL_NAME");
}

TEST_CASE("template: the reference fits the quoting context") {
  const TemplateValues v{{"q", "x"}};
  // Inside double quotes: a bare reference, expanded within the string.
  CHECK(*render_template("echo \"a {{q}} b\"", v, {}) == "echo \"a ${TRNSLURM_Q} b\"");
  CHECK(*render_template("echo \"{{q}}\"", v, {}) == "echo \"${TRNSLURM_Q}\"");
  // Inside single quotes (a nested bash -c): left for that shell to expand from the environment.
  CHECK(*render_template("bash -c 'echo {{q}}'", v, {}) == "bash -c 'echo \"${TRNSLURM_Q}\"'");
  // A command substitution inside double quotes is unquoted again.
  CHECK(*render_template("echo \"$(echo {{q}})\"", v, {}) == "echo \"$(echo \"${TRNSLURM_Q}\")\"");
  CHECK(*render_template("echo \"`echo {{q}}`\"", v, {}) == "echo \"`echo \"${TRNSLURM_Q}\"`\"");
  // Escaped quotes and quotes in comments do not open a string.
  CHECK(*render_template("echo \\\" {{q}}", v, {}) == "echo \\\" \"${TRNSLURM_Q}\"");
  CHECK(*render_template("# don't\necho {{q}}", v, {}) == "# don't\necho \"${TRNSLURM_Q}\"");
  CHECK(*render_template("echo it\\'s {{q}}", v, {}) == "echo it\\'s \"${TRNSLURM_Q}\"");
  CHECK(*render_template("echo $'a\\'b' {{q}}", v, {}) == "echo $'a\\'b' \"${TRNSLURM_Q}\"");
  CHECK(*render_template("echo \"a\\\"b {{q}}\"", v, {}) == "echo \"a\\\"b ${TRNSLURM_Q}\"");
}

TEST_CASE("template: escaped braces stay literal") {
  const TemplateValues v{{"a", "1"}};
  CHECK(*render_template("\\{{a}} {{a}}", v, {}) == "{{a}} \"${TRNSLURM_A}\"");
}

TEST_CASE("template: unknown placeholder is reported at file:line:column") {
  const TemplateValues v{{"a", "1"}};
  auto r = render_template("echo {{a}}\n  run {{nope}}", v, TextOrigin{"r.toml", 10, 5});
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "r.toml:11:7");
  CHECK(r.error().what == "unknown placeholder '{{nope}}'");
  CHECK(r.error().hint.find("a") != std::string::npos);
  auto first_line = render_template("x {{nope}}", v, TextOrigin{"r.toml", 3, 12});
  REQUIRE_FALSE(first_line);
  CHECK(first_line.error().where == "r.toml:3:14");
}

TEST_CASE("template: malformed placeholders are errors") {
  const TemplateValues v{{"a", "1"}};
  CHECK_FALSE(render_template("{{a", v, {}));
  CHECK_FALSE(render_template("{{a\n}}", v, {}));
  CHECK_FALSE(render_template("{{1a}}", v, {}));
  CHECK_FALSE(render_template("{{a b}}", v, {}));
  CHECK_FALSE(render_template("{{}}", v, {}));
}

TEST_CASE("template: a value that cannot be quoted is refused with the placeholder's position") {
  using namespace std::string_literals;
  const TemplateValues v{{"bad", "x\0y"s}};
  auto r = render_template("echo {{bad}}", v, TextOrigin{"f", 1, 1});
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "f:1:6");
  CHECK(r.error().what.find("NUL") != std::string::npos);
}

TEST_CASE("template: shell_word leaves plain words bare and quotes the rest") {
  CHECK(shell_word("16-31").value() == "16-31");
  CHECK(shell_word("/fsx/cache,x:y@z+w=v").value() == "/fsx/cache,x:y@z+w=v");
  CHECK(shell_word("").value() == "''");
  CHECK(shell_word("a b").value() == "'a b'");
  CHECK(shell_word("it's").value() == "'it'\\''s'");
  CHECK(shell_word("$HOME").value() == "'$HOME'");
  CHECK_FALSE(shell_word(std::string("a\0b", 3)));
}

TEST_CASE("template: inside arithmetic only whole numbers are placed") {
  // bash evaluates a value inside $(( )) or (( )) as arithmetic, which expands array subscripts
  // again: `a[$(cmd)]` runs cmd whatever the quotes around the reference.
  const TemplateValues hostile{{"n", "a[$(touch /tmp/owned)]"}, {"steps", "120"}, {"neg", "-3"}};
  for (const char* text : {"echo $(( {{n}} + 1 ))", "(( {{n}} > 2 )) && echo", "echo \"$(( {{n}} ))\"",
                           "echo $(( ({{n}}) * 2 ))", "x=$(( \"{{n}}\" ))", "echo $( (( {{n}} )) && echo)"}) {
    INFO(text);
    const auto r = render_template(text, hostile, {"r.toml", 3, 5});
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("arithmetic") != std::string::npos);
    CHECK(r.error().where.starts_with("r.toml:3:"));
  }
  // Whole numbers are placed there; leading zeros (octal to bash) are not.
  CHECK(*render_template("echo $(( {{steps}} / 2 ))", hostile, {}) ==
        "echo $(( \"${TRNSLURM_STEPS}\" / 2 ))");
  CHECK(render_template("(( {{neg}} < 0 ))", hostile, {}));
  CHECK_FALSE(render_template("echo $(( {{z}} ))", TemplateValues{{"z", "010"}}, {}));
  // Outside the arithmetic, before and after it, and as an argument of a command substitution
  // inside it, any value is placed as usual.
  CHECK(render_template("echo {{n}} $(( 1 + 1 )) {{n}}", hostile, {}));
  CHECK(render_template("echo $(( $(wc -c < {{n}}) ))", hostile, {}));
  CHECK(render_template("( (echo {{n}}) )", hostile, {}));
  // Raw substitution quotes the whole result elsewhere: no arithmetic check.
  CHECK(render_template("$(( {{n}} ))", hostile, {}, Substitution::raw));
}

// Issue 31: the other places where bash reads a value as code whatever its quotes. Each is
// refused at the placeholder's position unless the value is a whole number; beside them, in
// contexts that only expand, any value is placed.
TEST_CASE("template: subscripts, $[ ], substring offsets, let and [[ -eq ]] take whole numbers only") {
  const TemplateValues v{{"n", "a[$(touch /tmp/owned)]"}, {"i", "3"}, {"path", "/data/$(id)"}};
  for (const char* text :
       {"echo $[ {{n}} + 1 ]", "echo \"${arr[{{n}}]}\"", "echo ${arr[{{n}}]}", "arr[{{n}}]=x",
        "unset arr[{{n}}]", "echo \"${name:{{n}}}\"", "echo ${name:1:{{n}}}", "echo ${name: -{{n}}}",
        "let x={{n}}", "let \"x = {{n}} + 1\"", "[[ {{n}} -eq 1 ]]", "[[ 1 -lt \"{{n}}\" ]]",
        "[[ -v {{n}} ]]", "echo $(( ${x:-{{n}}} ))", "echo $[ arr[{{n}}] ]"}) {
    INFO(text);
    const auto r = render_template(text, v, {"r.toml", 7, 3});
    REQUIRE_FALSE(r);
    CHECK(r.error().where.starts_with("r.toml:7:"));
    CHECK(r.error().what.find("is not a whole number") != std::string::npos);
    TemplateValues whole = v;
    whole["n"] = "12";
    CHECK(render_template(text, whole, {}));
  }
  // Expansions that are not evaluated place any value.
  for (const char* text : {"echo \"${name:-{{n}}}\"", "echo ${name:={{n}}}", "echo ${name#{{n}}}",
                           "[[ -f {{path}} ]]", "[[ \"{{path}}\" == /data/* ]]", "[[ -n {{n}} ]] && echo ok",
                           "echo [{{n}}]", "x={{n}}", "printf '%s' \"${arr[{{i}}]}\" {{n}}"}) {
    INFO(text);
    CHECK(render_template(text, v, {}));
  }
  CHECK(*render_template("echo ${arr[{{i}}]}", v, {}) == "echo ${arr[\"${TRNSLURM_I}\"]}");
}

TEST_CASE("template: a second shell's command string takes no value it would read as code") {
  const TemplateValues v{{"path", "/data/$(touch /tmp/owned)"}, {"n", "8"}};
  for (const char* text : {"bash -c \"ls {{path}}\"", "sh -c {{path}}", "/bin/bash -lc \"run {{path}}\"",
                           "srun bash -c \"x {{path}}\"", "eval echo {{path}}", "eval \"echo {{path}}\"",
                           "ssh node1 ls {{path}}", "ssh {{path}} true", "su user -c \"ls {{path}}\"",
                           "bash -c \"echo $(echo {{path}})\"", "timeout 5 sh -ec \"ls {{path}}\""}) {
    INFO(text);
    const auto r = render_template(text, v, {"r.toml", 2, 1});
    REQUIRE_FALSE(r);
    CHECK(r.error().where.starts_with("r.toml:2:"));
    CHECK(r.error().what.find("second shell") != std::string::npos);
    CHECK(render_template(text, TemplateValues{{"path", "12"}, {"n", "8"}}, {}));
  }
  // Single quotes keep the outer shell from expanding: the inner shell expands the exported
  // variable itself. Arguments after the command string are its $0, $1...; another command's
  // arguments are only arguments.
  for (const char* text : {"bash -c 'ls {{path}}'", "eval 'echo {{path}}'", "ssh node1 'ls {{path}}'",
                           "bash -c 'ls \"$1\"' _ {{path}}", "sh -c \"ls \\\"\\$1\\\"\" _ \"{{path}}\"",
                           "bash script.sh {{path}}", "echo {{path}}; bash -c 'true'",
                           "python -c {{n}} {{path}}", "bash -c \"run --nodes {{n}}\""}) {
    INFO(text);
    CHECK(render_template(text, v, {}));
  }
  CHECK(*render_template("bash -c 'ls {{path}}'", v, {}) == "bash -c 'ls \"${TRNSLURM_PATH}\"'");
}

// Issue 31: a shell's input is its code. What a pipeline prints into a shell reading its script
// from stdin, a here-string to one, and a here-document one reads (or a later command of its
// pipeline) take whole numbers only; the refusal is at the placeholder, found once the pipeline
// was read.
TEST_CASE("template: a value a shell reads from its input is refused unless a whole number") {
  const TemplateValues v{{"path", "/data/$(touch /tmp/owned)"}, {"n", "8"}};
  for (const char* text :
       {"echo {{path}} | bash", "printf '%s\\n' \"{{path}}\" | sh", "echo \"$(echo {{path}})\" | bash -s",
        "echo {{path}} | tr a b | /bin/bash", "echo {{path}} |& sudo -u u bash", "{ echo {{path}}; } | sh",
        "( echo {{path}}; echo ok ) | zsh", "cat <<< {{path}} | bash", "bash <<< \"ls {{path}}\"",
        "bash -s <<EOF\nls {{path}}\nEOF", "cat <<EOF | sh\nls {{path}}\nEOF",
        "x=1\nbash <<-EOF # comment\n\tls {{path}}\n\tEOF\n", "echo {{path}} 2>&1 | timeout 5 bash",
        "declare -i k={{path}}", "local -ri k={{path}}", "typeset -i k=\"{{path}}\"",
        "out=$(echo {{path}} | bash)"}) {
    INFO(text);
    const auto r = render_template(text, v, {"r.toml", 4, 1});
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("is not a whole number") != std::string::npos);
    CHECK(r.error().where.starts_with("r.toml:"));
    CHECK(render_template(text, TemplateValues{{"path", "12"}, {"n", "8"}}, {}));
  }
  // Where: the placeholder, not the shell that reads it.
  const auto at = render_template("echo start\necho {{path}} |\n  bash", v, {"r.toml", 4, 1});
  REQUIRE_FALSE(at);
  CHECK(at.error().where == "r.toml:5:6");
  CHECK(at.error().what.find("a shell reads as its script") != std::string::npos);
  // A shell given its script another way reads the pipe as data; other commands' input is data;
  // a new command line is a new pipeline.
  for (const char* text : {"echo {{path}} | bash -c 'read -r v; ls \"$v\"'", "echo {{path}} | bash script.sh",
                           "echo {{path}} | grep x", "echo {{path}}; bash -c true", "echo {{path}}\nbash",
                           "echo {{path}} || bash", "echo {{path}} && sh", "echo {{path}} 2>&1 | tee log",
                           "cat <<EOF\n{{path}}\nEOF\nbash", "declare -r k={{path}}",
                           "echo {{path}} # | bash", "bash -c 'ls' <<< {{path}}"}) {
    INFO(text);
    CHECK(render_template(text, v, {}));
  }
}

TEST_CASE("template: a here-document's body is expanded as in double quotes, and a quoted one is refused") {
  const TemplateValues v{{"path", "/data/a b"}, {"n", "8"}};
  // No quotes are added (they would be characters of the body); the reference expands there.
  CHECK(*render_template("cat >f <<EOF\npath={{path}}\nEOF\necho {{path}}", v, {}) ==
        "cat >f <<EOF\npath=${TRNSLURM_PATH}\nEOF\necho \"${TRNSLURM_PATH}\"");
  CHECK(*render_template("cat <<-END\n\t\"{{path}}\"\n\tEND\n", v, {}) ==
        "cat <<-END\n\t\"${TRNSLURM_PATH}\"\n\tEND\n");
  // Two on a line: each body after the other.
  CHECK(*render_template("paste <<A <<B\n{{n}}\nA\n{{path}}\nB\n", v, {}) ==
        "paste <<A <<B\n${TRNSLURM_N}\nA\n${TRNSLURM_PATH}\nB\n");
  for (const char* text :
       {"cat <<'EOF'\n{{path}}\nEOF", "cat <<\"EOF\" >f\nx {{n}}\nEOF", "cat <<\\EOF\n{{n}}\nEOF"}) {
    INFO(text);
    const auto r = render_template(text, v, {"r.toml", 9, 1});
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("delimiter is quoted") != std::string::npos);
    CHECK(r.error().where.starts_with("r.toml:10:"));
  }
}

// file:line:column of the first `what` in `text`, which starts at `origin`.
static std::string where_of(std::string_view text, std::string_view what, const TextOrigin& origin) {
  const auto at = text.find(what);
  const auto before = text.substr(0, at);
  const auto lines = static_cast<std::uint32_t>(std::ranges::count(before, '\n'));
  const auto line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  const auto column = static_cast<std::uint32_t>(at - line_start) + (lines == 0 ? origin.column : 1);
  return origin.file + ":" + std::to_string(origin.line + lines) + ":" + std::to_string(column);
}

// Issue 31, the inner shell: the command string of `bash -c` (through srun, env, sudo, timeout,
// xargs), and eval's arguments, are a second script, read by the same rules as the first. A
// single-quoted one reaches the inner shell as written, with the reference "${TRNSLURM_...}" in
// it: where the inner shell reads that as code, only a whole number is placed.
TEST_CASE("template: the command string of bash -c is read as a script of its own") {
  const TemplateValues v{{"path", "/data/$(touch /tmp/owned)"}, {"n", "8"}};
  for (const char* text :
       {"bash -c 'echo $(( {{path}} ))'", "sh -c 'echo $[ {{path}} + 1 ]'", "bash -c 'a[{{path}}]=1'",
        "bash -c '[[ {{path}} -eq 1 ]] && echo'", "srun -N 2 bash -c 'let n={{path}}'",
        "env X=1 bash -c 'echo {{path}} | sh'", "sudo -u u bash -lc 'bash <<< {{path}}'",
        "timeout 5 sh -c 'eval echo {{path}}'", "bash -c 'bash -c \"ls {{path}}\"'",
        "bash -c 'bash -s <<EOF\nls {{path}}\nEOF\n'", "echo x | xargs sh -c 'echo $(( {{path}} ))'",
        "eval 'echo $(( {{path}} ))'", "bash -c $'echo $(( {{path}} ))'", "bash -c 'x=1; echo ${x:{{path}}}'",
        "bash -c 'bash -c '\\''echo $(( {{path}} ))'\\'''", "bash -c 'declare -i k; k={{path}}'"}) {
    INFO(text);
    const auto r = render_template(text, v, {"r.toml", 2, 1});
    CHECK_FALSE(r);
    if (r) continue;
    CHECK(r.error().what.find("is not a whole number") != std::string::npos);
    CHECK(r.error().where == where_of(text, "{{path}}", {"r.toml", 2, 1}));
    CHECK(render_template(text, TemplateValues{{"path", "12"}, {"n", "8"}}, {}));
  }
  // A quoted here-document in the inner script expands nothing: the value would not be placed.
  const auto lit = render_template("bash -c 'cat <<\"E\"\n{{n}}\nE\n'", v, {"r.toml", 1, 1});
  REQUIRE_FALSE(lit);
  CHECK(lit.error().what.find("delimiter is quoted") != std::string::npos);
  CHECK(lit.error().where == "r.toml:2:1");
  // Where the inner shell only expands, any value; the reference fits the inner quoting (bare in
  // its double quotes and here-documents, where quotes would be characters of the text).
  for (const char* text :
       {"bash -c 'ls {{path}}'", "srun bash -c 'exec run --data {{path}} --n $(( {{n}} * 2 ))'",
        "bash -c 'ls \"$1\"' _ {{path}}", "bash -c 'bash -c '\\''ls {{path}}'\\'''", "eval 'ls {{path}}'",
        "bash -c 'x=$(( 1 + 1 )); echo {{path}}'", "echo {{path}} | xargs -I{} sh -c 'ls \"$1\"' _ {}"}) {
    INFO(text);
    CHECK(render_template(text, v, {}));
  }
  CHECK(*render_template("bash -c 'echo \"a {{path}}\"'", v, {}) == "bash -c 'echo \"a ${TRNSLURM_PATH}\"'");
  CHECK(*render_template("bash -c 'cat <<EOF >f\n{{path}}\nEOF\n'; echo {{path}}", v, {}) ==
        "bash -c 'cat <<EOF >f\n${TRNSLURM_PATH}\nEOF\n'; echo \"${TRNSLURM_PATH}\"");
  CHECK(*render_template("bash -c 'ls {{path}}'", v, {}) == "bash -c 'ls \"${TRNSLURM_PATH}\"'");
}

// Issue 31, what the first pass missed: a variable declared -i earlier, a command kept in a
// variable and then run, a process substitution a shell runs, an interpreter reading its
// program from stdin or from -c/-e, xargs putting its input into a command string.
TEST_CASE("template: values reaching code through variables, process substitutions and interpreters") {
  const TemplateValues v{{"path", "/data/$(touch /tmp/owned)"}, {"n", "8"}};
  for (const char* text : {"declare -i n; n={{path}}",
                           "local -i n=1\nn+={{path}}",
                           "typeset -i a b\necho\nb=\"{{path}}\"",
                           "declare -i n; export n={{path}}",
                           "cmd=\"ls {{path}}\"; $cmd",
                           "cmd=\"ls {{path}}\"\neval \"$cmd\"",
                           "c={{path}}; bash -c \"$c\"",
                           "c=\"{{path}}\"; echo \"$c\" | bash",
                           "c=\"ls {{path}}\"; d=\"$c -l\"; eval $d",
                           "c={{path}}; sudo ${c}",
                           "c=$(echo {{path}}); $c",
                           "c={{path}}; echo $(( $c + 1 ))",
                           "bash <(echo {{path}})",
                           "source <(echo \"ls {{path}}\")",
                           ". <(printf '%s' {{path}})",
                           "bash < <(echo {{path}})",
                           "echo {{path}} | python",
                           "echo {{path}} | python3 -u",
                           "cat <<EOF | perl\nprint {{path}}\nEOF",
                           "node <<< {{path}}",
                           "echo {{path}} | /usr/bin/python3.11",
                           "echo {{path}} | ruby",
                           "python3 -c \"print({{path}})\"",
                           "perl -e \"print {{path}}\"",
                           "echo {{path}} | xargs -I{} sh -c 'ls {}'",
                           "echo {{path}} | xargs -I % bash -c \"ls %\"",
                           "echo {{path}} | xargs -i sh -c 'echo {}'"}) {
    INFO(text);
    const auto r = render_template(text, v, {"r.toml", 3, 1});
    CHECK_FALSE(r);
    if (r) continue;
    CHECK(r.error().what.find("is not a whole number") != std::string::npos);
    CHECK(r.error().where.starts_with("r.toml:"));
    CHECK(render_template(text, TemplateValues{{"path", "12"}, {"n", "8"}}, {}));
  }
  const auto at = render_template("cmd=\"ls {{path}}\"\necho\n$cmd", v, {"r.toml", 3, 1});
  REQUIRE_FALSE(at);
  CHECK(at.error().where == "r.toml:3:9");
  CHECK(at.error().what.find("$cmd") != std::string::npos);
  for (const char* text : {"n=$(find {{path}} -name done | wc -l)\nnext=$((${n:-0} + 10))",
                           "declare -i n; m={{path}}",
                           "declare -i n; echo n={{path}}",
                           "declare n; n={{path}}",
                           "declare -i n; n={{n}}",
                           "c={{path}}; ls \"$c\"",
                           "c={{path}}; ls $c",
                           "c={{path}}; c=ls; $c",
                           "args=(--data {{path}}); run \"${args[@]}\"",
                           "c={{path}}; bash -c 'ls \"$c\"'",
                           "c={{path}}; \"$c\" -h",
                           "diff <(echo {{path}}) f",
                           "bash script.sh <(echo {{path}})",
                           "cat <(echo {{path}})",
                           "while read -r l; do echo \"$l\"; done < <(echo {{path}})",
                           "echo {{path}} | python script.py",
                           "echo {{path}} | python -m json.tool",
                           "python3 -c 'import sys; print(sys.argv[1])' {{path}}",
                           "python train.py --data {{path}}",
                           "echo {{path}} | perl -ne 'print'",
                           "echo {{path}} | xargs ls",
                           "echo {{path}} | xargs bash -c 'ls \"$@\"' _",
                           "python3 -c \"print({{n}})\" {{path}}"}) {
    INFO(text);
    CHECK(render_template(text, v, {}));
  }
}
