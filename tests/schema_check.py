#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Validates kimg's JSON documents against their JSON Schemas (docs/schema/,
draft 2020-12), with Debian's python3-jsonschema.

  schema_check.py SCHEMA FILE...      each FILE one document of SCHEMA
  schema_check.py --manifest LIST     LIST: lines "SCHEMA<TAB>FILE<TAB>WHAT"
  schema_check.py --paths FILE...     (a tool, not a test) the key paths and
                                      types seen in documents, to write or
                                      review a schema

SCHEMA is a name of docs/schema/ without ".schema.json" ("check", "device")
or "report-lines": FILE is then a libkimg.so log, each line opening with '{'
one report (a driver mismatch object by its "report" key, else an image
report); other lines are the text format's and are not JSON. A command's
document that is an error document (a top-level "error" object: the command
failed before its document, docs/json-probe.md) is checked against "error".

Prints one "ok - ..." line per schema with the number of documents, or a
"FAIL - ..." line per invalid document (the first errors, each with its
path in the document); exits 1 when any failed. The schemas say
"additionalProperties": false everywhere, so a key a producer adds without
its schema fails here, as does a required key missing (tests/lib.bash
json_valid / json_collect call this). Exit status 3, and one line on
stderr, when python3-jsonschema is missing (lib.bash: a skip, or a failure
under CI).

Each schema is first checked against the draft 2020-12 metaschema, which
takes most of a run's time (about 0.4 s of CPU); with KIMG_SCHEMA_CACHE
naming a folder (tests/lib.bash: $BUILD/tests/schema-cache), a set of
schemas that passed is remembered there by the SHA-256 of their bytes and
jsonschema's version, and that check is not repeated for the same bytes."""
import hashlib
import json
import os
import sys

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "schema")
BASE = "https://kimg.invalid/schema/"  # the schemas' $id base; never fetched


def load_schemas(digest=None):
    """{name: schema}; digest, a hashlib object, is fed every file's name and bytes"""
    resources = {}
    for name in sorted(os.listdir(SCHEMA_DIR)):
        if name.endswith(".schema.json"):
            with open(os.path.join(SCHEMA_DIR, name), "rb") as f:
                data = f.read()
            if digest is not None:
                digest.update(b"%s\0%d\0" % (name.encode(), len(data)) + data)
            resources[name[: -len(".schema.json")]] = json.loads(data.decode("utf-8"))
    return resources


def jsonschema_version():
    try:
        from importlib.metadata import version
        return version("jsonschema")
    except Exception:  # no metadata: never a cache hit
        return None


class Checker:
    def __init__(self, cache=None):
        """cache: a folder remembering schema sets that passed the metaschema
        check (None: check them every time)"""
        import jsonschema
        digest = hashlib.sha256()
        self.resources = load_schemas(digest)
        stamp = None
        if cache:
            v = jsonschema_version()
            if v:
                digest.update(b"jsonschema " + v.encode())
                stamp = os.path.join(cache, digest.hexdigest())
        checked = stamp is not None and os.path.exists(stamp)
        self.validators = {}
        cls = jsonschema.Draft202012Validator
        try:  # jsonschema >= 4.18: the referencing library
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012
            reg = Registry().with_resources(
                (BASE + n + ".schema.json", Resource.from_contents(s, default_specification=DRAFT202012))
                for n, s in self.resources.items())
            make = lambda s: cls(s, registry=reg)
        except ImportError:  # Debian 12's 4.10: RefResolver with every schema in its store
            store = {BASE + n + ".schema.json": s for n, s in self.resources.items()}
            make = lambda s: cls(s, resolver=jsonschema.RefResolver.from_schema(s, store=store))
        for name, s in self.resources.items():
            if not checked:
                cls.check_schema(s)
            if s.get("$id") != BASE + name + ".schema.json":
                raise ValueError("docs/schema/%s.schema.json: $id must be %s" % (name, BASE + name + ".schema.json"))
            if not isinstance(s.get("schema_version"), int):
                raise ValueError("docs/schema/%s.schema.json: no integer schema_version" % name)
            self.validators[name] = make(s)
        if stamp is not None and not checked:
            try:  # written whole, then renamed: a reader never sees half of one
                os.makedirs(cache, exist_ok=True)
                tmp = "%s.%d" % (stamp, os.getpid())
                with open(tmp, "w") as f:
                    f.write("checked against the draft 2020-12 metaschema\n")
                os.replace(tmp, stamp)
            except OSError:
                pass

    def errors(self, schema, doc):
        if schema not in self.validators:
            return ["no schema docs/schema/%s.schema.json" % schema]
        if schema not in ("error", "report", "driver-mismatch") and isinstance(doc, dict) and \
                isinstance(doc.get("error"), dict):
            schema = "error"
        errs = sorted(self.validators[schema].iter_errors(doc), key=lambda e: list(e.absolute_path))
        return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message[:300])
                for e in errs[:5]]

    def check_file(self, schema, path):
        """[(what, [errors])] for the documents of one file."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            return [("", ["cannot read: %s" % e])]
        if schema == "report-lines":
            out = []
            for n, line in enumerate(data.split(b"\n"), 1):
                if not line.lstrip().startswith(b"{"):
                    continue
                try:
                    doc = json.loads(line.decode("utf-8"))
                except (ValueError, UnicodeDecodeError) as e:
                    out.append(("line %d" % n, ["not a JSON document: %s" % e]))
                    continue
                kind = "driver-mismatch" if isinstance(doc, dict) and doc.get("report") == "driver_mismatch" \
                    else "report"
                out.append(("line %d" % n, self.errors(kind, doc)))
            return out
        text = data.decode("utf-8", errors="replace")
        if not text.strip():
            return [("", ["no document (empty output: --json must always write one)"])]
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            return [("", ["not one JSON document: %s" % e])]
        return [("", self.errors(schema, doc))]


def paths(files):
    seen = {}

    def walk(v, p):
        t = type(v).__name__
        seen.setdefault(p, set()).add(t)
        if isinstance(v, dict):
            for k, c in v.items():
                walk(c, p + "." + k)
        elif isinstance(v, list):
            for c in v:
                walk(c, p + "[]")
    for f in files:
        for line in open(f, encoding="utf-8", errors="replace"):
            if line.lstrip().startswith("{"):
                try:
                    walk(json.loads(line), "")
                except ValueError:
                    pass
    for p in sorted(seen):
        print(p or "(top)", " ".join(sorted(seen[p])))


def main(argv):
    if len(argv) >= 2 and argv[1] == "--paths":
        paths(argv[2:])
        return 0
    try:
        checker = Checker(os.environ.get("KIMG_SCHEMA_CACHE"))
    except ImportError as e:
        print("schema_check.py: python3-jsonschema missing (%s; scripts/setup-debian.sh installs it)" % e,
              file=sys.stderr)
        return 3
    except Exception as e:  # a schema that is not one
        print("FAIL - schema check: %s" % e)
        return 1
    jobs = []
    if len(argv) == 3 and argv[1] == "--manifest":
        for line in open(argv[2], encoding="utf-8", errors="replace"):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                jobs.append((parts[0], parts[1], parts[2] if len(parts) > 2 else parts[1]))
    elif len(argv) >= 3:
        jobs = [(argv[1], f, f) for f in argv[2:]]
    else:
        print(__doc__)
        return 2
    counts, bad = {}, {}
    for schema, path, what in jobs:
        for sub, errs in checker.check_file(schema, path):
            counts[schema] = counts.get(schema, 0) + 1
            if errs:
                bad[schema] = bad.get(schema, 0) + 1
                print("FAIL - schema %s: %s%s" % (schema, what, (" (%s)" % sub) if sub else ""))
                for e in errs:
                    print("     " + e)
    for schema in sorted(counts):
        if schema in bad:
            continue
        print("ok - schema %s: %d document%s valid (docs/schema/%s.schema.json)" % (
            schema, counts[schema], "" if counts[schema] == 1 else "s",
            schema if schema != "report-lines" else "{report,driver-mismatch}"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
