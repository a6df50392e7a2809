"""The report notebooks' views: what each display cell shows (HTML, tables, figures, one
widget), one module per notebook (eval_report, tune_explorer with tune_parts and picker)."""
