-- Owner: operators (column amount_format)  services/api
-- how an operator's callbacks carry `amount`: 'string', a decimal string in the
-- currency's precision (the default, docs/architecture.md "Money rules"), or 'number', a JSON number in major
-- units for an operator that reads docs/contract.md "Operator callbacks"'s "amount | number" literally (docs/decisions/money/0007-amounts-on-the-wire.md).
alter table operators
  add column amount_format text not null default 'string' check (amount_format in ('string', 'number'));
