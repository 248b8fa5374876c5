"""Print the test names of a Kafka test file at release tags, read from a local git snapshot of Kafka (e.g. the
one `fetch github:apache/kafka` brings), as the Python literal a tests/kafka_suites module records in its Suite.

    python bench/kafka_suite_names.py --repo /work/.mirror/apache+kafka/repo \
        --file core/src/test/scala/unit/kafka/coordinator/group/GroupMetadataTest.scala --tag 2.4.1 --tag 2.7.0
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.kafka_suites.registry import kafka_test_names  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repo", required=True, help="a git directory holding Kafka's tags")
    p.add_argument("--file", required=True, help="the test file's path in the repository")
    p.add_argument("--tag", action="append", required=True, help="a tag (repeatable); TAG=REF reads REF for TAG")
    args = p.parse_args()
    print("{")
    for tag in args.tag:
        name, _, ref = tag.partition("=")
        source = subprocess.run(["git", "--git-dir", args.repo, "show", f"{ref or name}:{args.file}"],
                                check=True, capture_output=True, text=True).stdout
        names = kafka_test_names(source)
        print(f"    {name!r}: (  # {len(names)} tests")
        for n in names:
            print(f"        {n!r},")
        print("    ),")
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
