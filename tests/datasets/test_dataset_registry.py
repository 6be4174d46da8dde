from pathlib import Path

import pytest
import yaml

from blindmcq.config.schema import validate_group
from blindmcq.datasets import LOADERS, load_dataset
from blindmcq.datasets.customs import ACT_SLUGS
from blindmcq.datasets.items import Item, write_items
from blindmcq.errors import ConfigError, InputError

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf" / "dataset"


def conf(name: str) -> dict:
    return yaml.safe_load((CONF / f"{name}.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def root(tmp_path_factory, shared_data: Path) -> Path:
    """A project root whose data/ is the full inputs, as `make data` leaves it."""
    root = tmp_path_factory.mktemp("root")
    (root / "data").symlink_to(shared_data, target_is_directory=True)
    return root


def test_every_config_names_itself_and_a_known_loader():
    files = sorted(CONF.glob("*.yaml"))
    assert {f.stem for f in files} >= {
        "customs-default", "customs-legislation", "customs-full", "lexam", "lexam-8", "lexam-16", "lexam-32",
        "nonsenseqa", "generic-example",
    }  # fmt: skip
    for f in files:
        cfg = conf(f.stem)
        assert cfg["name"] == f.stem and cfg["loader"] in LOADERS


@pytest.mark.parametrize(
    ("name", "n_items", "n_options"),
    [("customs-legislation", 340, 4), ("customs-full", 2950, 4), ("lexam", 1660, 4),
     ("lexam-8", 385, 8), ("lexam-16", 385, 16), ("lexam-32", 385, 32)],
)  # fmt: skip
def test_shipped_configs_load_from_data(root, name, n_items, n_options):
    items = load_dataset(validate_group("dataset", conf(name)), root=root)
    assert len(items) == n_items and {i.n_options for i in items} == {n_options}


def test_generic_example_config_reads_an_mmlu_style_csv(tmp_path):
    (tmp_path / "banks").mkdir()
    csv = "question,A,B,C,D,answer\nq,a,b,c,d,D\n"
    (tmp_path / "banks" / "my-bank.csv").write_text(csv, encoding="utf-8")
    (item,) = load_dataset(validate_group("dataset", conf("generic-example")), root=tmp_path)
    assert item.id == "mybank-my-bank-1" and item.key == 3


def test_items_loader_reads_items_jsonl_from_several_files(tmp_path):
    a = Item("s-a-1", "s", "a", 1, "q", ("x", "y"), 1)
    b = Item("s-b-1", "s", "b", 1, "q", tuple("abcdefghij"), 9)
    write_items(tmp_path / "one.jsonl", [a])
    write_items(tmp_path / "two.jsonl", [b])
    items = load_dataset(validate_group("dataset", {"loader": "items", "paths": ["*.jsonl"]}), root=tmp_path)
    assert items == [a, b]
    write_items(tmp_path / "three.jsonl", [a])
    with pytest.raises(InputError, match="s-a-1"):
        load_dataset(validate_group("dataset", {"loader": "items", "paths": ["*.jsonl"]}), root=tmp_path)


def test_limit_keeps_published_order(root):
    cfg = {**conf("customs-legislation"), "limit": 3}
    assert [i.id for i in load_dataset(validate_group("dataset", cfg), root=root)] == [
        f"dmsu-constitution-{n}" for n in (1, 2, 3)
    ]


def test_config_errors_name_the_key(root):
    with pytest.raises(ConfigError, match=r"'dataset\.loader'"):
        load_dataset(validate_group("dataset", {"loader": "excel"}), root=root)
    with pytest.raises(ConfigError, match=r"'dataset\.part'"):
        load_dataset(
            validate_group("dataset", {**conf("customs-full"), "part": ["legislation"]}), root=root
        )  # typo of "parts"
    with pytest.raises(ConfigError, match=r"'dataset\.path'"):
        load_dataset(validate_group("dataset", {"loader": "lexam"}), root=root)
    with pytest.raises(ConfigError, match=r"'dataset\.limit'"):
        load_dataset(validate_group("dataset", {**conf("lexam"), "limit": -1}), root=root)
    with pytest.raises(InputError, match="no file matches"):
        load_dataset(validate_group("dataset", {"loader": "items", "paths": ["nothing/*.jsonl"]}), root=root)


def test_nonsense_loader_delegates_to_the_generator():
    cfg = conf("nonsenseqa")
    items = load_dataset(validate_group("dataset", cfg))
    assert len(items) == cfg["n_test"] and items[0].id == "nonsenseqa-test-1"
    assert all(i.usable and i.n_options == 4 for i in items)
    assert load_dataset(validate_group("dataset", cfg)) == items  # seeded
    fewshot = load_dataset(validate_group("dataset", {**cfg, "split": "fewshot", "n_fewshot": 10}))
    assert len(fewshot) == 10 and fewshot[0].id == "nonsenseqa-fewshot-1"
    ten = load_dataset(validate_group("dataset", {**cfg, "n_test": 30, "n_options": 10}))
    assert {i.n_options for i in ten} == {10}
    with pytest.raises(ConfigError, match=r"'dataset\.split'"):
        load_dataset(validate_group("dataset", {**cfg, "split": "train"}))
    with pytest.raises(ConfigError, match=r"'dataset\.n_options'"):
        load_dataset(validate_group("dataset", {**cfg, "n_options": 1}))


def test_default_pdf_bank_files_carry_the_customs_act_slugs(root):
    pdfs = sorted(p.name for p in REPO.glob(conf("customs-default")["paths"][0]))
    assert pdfs == sorted(f"dmsu-{slug}.pdf" for slug in ACT_SLUGS.values())


@pytest.mark.slow
def test_pdf_loader_gives_the_json_items_of_an_act(root):
    # One act (the smallest) keeps this fast; the corpus tests extract the whole default bank.
    cfg = {**conf("customs-default"), "paths": ["defaults/bank/dmsu-customs-code.pdf"]}
    pdf = load_dataset(validate_group("dataset", cfg), root=REPO)
    json_items = {
        i.id: i
        for i in load_dataset(
            validate_group("dataset", {**conf("customs-legislation"), "acts": ["customs-code"]}), root=root
        )
    }
    assert len(pdf) == len(json_items) == 62 and {i.id for i in pdf} == set(json_items)
    assert all(i.key == json_items[i.id].key for i in pdf)
