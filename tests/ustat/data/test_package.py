"""ustat.data as a package: its public API is importable from the package itself."""

import ustat.data.errors
import ustat.data.files
import ustat.data.identity
import ustat.data.scale
import ustat.data.synthetic
import ustat.data.values
from ustat import data as D


def test_public_names_importable_from_ustat_data():
    """Every name of ``ustat.data.__all__`` is the object of the module that defines it."""
    for name in D.__all__:
        assert getattr(D, name) is not None, name
    assert D.read_table is ustat.data.files.read_table and D.load_csv is ustat.data.files.load_csv
    assert D.Table is ustat.data.files.Table
    assert D.DataError is ustat.data.errors.DataError and D.Remark is ustat.data.errors.Remark
    assert D.normalize is ustat.data.scale.normalize
    assert D.parse_bounds is ustat.data.scale.parse_bounds
    assert D.DATA_BOUNDS_WARNING is ustat.data.scale.DATA_BOUNDS_WARNING
    assert D.synthetic_uniform is ustat.data.synthetic.synthetic_uniform
    assert D.map_labels is ustat.data.values.map_labels
    assert D.parse_numeric is ustat.data.values.parse_numeric
    assert D.category_codes is ustat.data.values.category_codes
    assert D.BINARY_VOCABULARY is ustat.data.values.BINARY_VOCABULARY
    assert D.dataset_identity is ustat.data.identity.dataset_identity
    assert D.DataIdentity is ustat.data.identity.DataIdentity
    assert issubclass(D.DataError, ValueError)


def test_every_module_lists_only_names_it_has():
    for mod in (ustat.data.errors, ustat.data.files, ustat.data.identity, ustat.data.scale,
                ustat.data.synthetic, ustat.data.values):
        for name in mod.__all__:
            assert hasattr(mod, name), f"{mod.__name__}.{name}"
