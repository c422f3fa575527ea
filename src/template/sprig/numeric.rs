//! Sprig's numbers: integer functions convert with `cast.ToInt64` and wrap on overflow as Go's
//! int64 does; the `…f` functions compute in decimal as Sprig's shopspring/decimal does, so
//! `addf 0.1 0.2` is 0.3. Sprig's integer arithmetic gives `int64`, `until` a `[]int`.

use super::convert::{check_size, strval_within, to_f64, to_i64};
use crate::template::go::{self, define, strconv, Args, Arity::AtLeast, Arity::Exact, FuncMap, GoValue, TemplateError};

pub fn register(funcs: &mut FuncMap) {
    define(funcs, "atoi", Exact(1), |args| {
        Ok(GoValue::Int(strconv::parse_int(args.string(0)?, 10).unwrap_or_else(strconv::NumError::value)))
    });
    define(funcs, "int", Exact(1), |args| Ok(GoValue::Int(to_i64(args.any(0)))));
    define(funcs, "int64", Exact(1), |args| Ok(GoValue::Int64(to_i64(args.any(0)))));
    define(funcs, "float64", Exact(1), |args| Ok(GoValue::Float(to_f64(args.any(0)))));
    define(funcs, "toDecimal", Exact(1), |args| {
        Ok(GoValue::Int64(strconv::parse_int(&strval_within(args, args.any(0))?, 8).unwrap_or(0)))
    });
    define(funcs, "add1", Exact(1), |args| Ok(GoValue::Int64(to_i64(args.any(0)).wrapping_add(1))));
    define(funcs, "add", AtLeast(0), |args| {
        Ok(GoValue::Int64(args.rest(0).iter().fold(0i64, |sum, v| sum.wrapping_add(to_i64(v)))))
    });
    define(funcs, "sub", Exact(2), |args| Ok(GoValue::Int64(to_i64(args.any(0)).wrapping_sub(to_i64(args.any(1))))));
    define(funcs, "mul", AtLeast(1), |args| {
        Ok(GoValue::Int64(args.rest(1).iter().fold(to_i64(args.any(0)), |product, v| product.wrapping_mul(to_i64(v)))))
    });
    define(funcs, "div", Exact(2), |args| {
        let (a, b) = (to_i64(args.any(0)), to_i64(args.any(1)));
        if b == 0 {
            return Err(go::fail(args.name(), "runtime error: integer divide by zero"));
        }
        Ok(GoValue::Int64(a.wrapping_div(b)))
    });
    define(funcs, "mod", Exact(2), |args| {
        let (a, b) = (to_i64(args.any(0)), to_i64(args.any(1)));
        if b == 0 {
            return Err(go::fail(args.name(), "runtime error: integer divide by zero"));
        }
        Ok(GoValue::Int64(a.wrapping_rem(b)))
    });
    for name in ["max", "biggest"] {
        define(funcs, name, AtLeast(1), |args| {
            Ok(GoValue::Int64(args.rest(1).iter().map(to_i64).fold(to_i64(args.any(0)), i64::max)))
        });
    }
    define(funcs, "min", AtLeast(1), |args| {
        Ok(GoValue::Int64(args.rest(1).iter().map(to_i64).fold(to_i64(args.any(0)), i64::min)))
    });
    define(funcs, "maxf", AtLeast(1), |args| {
        Ok(GoValue::Float(args.rest(1).iter().map(to_f64).fold(to_f64(args.any(0)), go_max)))
    });
    define(funcs, "minf", AtLeast(1), |args| {
        Ok(GoValue::Float(args.rest(1).iter().map(to_f64).fold(to_f64(args.any(0)), |a, b| -go_max(-a, -b))))
    });
    define(funcs, "floor", Exact(1), |args| Ok(GoValue::Float(to_f64(args.any(0)).floor())));
    define(funcs, "ceil", Exact(1), |args| Ok(GoValue::Float(to_f64(args.any(0)).ceil())));
    define(funcs, "round", AtLeast(2), |args| {
        if args.len() > 3 {
            return Err(TemplateError::Exec(format!(
                "wrong number of args for round: want at most 3 got {}",
                args.len()
            )));
        }
        let (value, places) = (to_f64(args.any(0)), args.int(1)?);
        let round_on = if args.len() == 3 { args.float(2)? } else { 0.5 };
        let pow = 10f64.powf(places as f64);
        let digit = pow * value;
        let rounded = if digit.fract() >= round_on { digit.ceil() } else { digit.floor() };
        Ok(GoValue::Float(rounded / pow))
    });
    define(funcs, "until", Exact(1), |args| {
        let count = args.int(0)?;
        until_step(args, 0, count, if count < 0 { -1 } else { 1 }).map(ints)
    });
    define(funcs, "untilStep", Exact(3), |args| until_step(args, args.int(0)?, args.int(1)?, args.int(2)?).map(ints));
    define(funcs, "seq", AtLeast(0), seq);
    define(funcs, "add1f", Exact(1), |args| decimal(args, &[args.any(0).clone(), GoValue::Int(1)], Dec::add));
    define(funcs, "addf", AtLeast(0), |args| {
        let mut operands = vec![GoValue::Float(0.0)];
        operands.extend(args.rest(0).iter().cloned());
        decimal(args, &operands, Dec::add)
    });
    define(funcs, "subf", AtLeast(1), |args| decimal(args, args.rest(0), Dec::sub));
    define(funcs, "mulf", AtLeast(1), |args| decimal(args, args.rest(0), Dec::mul));
    define(funcs, "divf", AtLeast(1), |args| decimal(args, args.rest(0), Dec::div));
}

/// Go's `math.Max`: NaN wins, then +Inf, and +0 over -0.
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else {
        a.max(b)
    }
}

/// A `[]int`.
fn ints(values: Vec<i64>) -> GoValue {
    go::typed_list(values.into_iter().map(GoValue::Int).collect(), go::Elem::Int)
}

/// Sprig's `untilStep`: from `start` towards `stop` (exclusive) by `step`; a step pointing away
/// gives nothing.
fn until_step(args: &Args<'_>, start: i64, stop: i64, step: i64) -> Result<Vec<i64>, TemplateError> {
    let count = if stop < start && step < 0 {
        (i128::from(start) - i128::from(stop) - 1) / -i128::from(step) + 1
    } else if stop > start && step > 0 {
        (i128::from(stop) - i128::from(start) - 1) / i128::from(step) + 1
    } else {
        0
    };
    check_size(args, usize::try_from(count).unwrap_or(usize::MAX).saturating_mul(16))?;
    let mut values = Vec::with_capacity(count as usize);
    let mut value = i128::from(start);
    for _ in 0..count {
        values.push(value as i64);
        value += i128::from(step);
    }
    Ok(values)
}

/// Sprig's `seq`, as GNU seq: `seq 3` is 1 2 3, `seq 2 5`, `seq 0 2 10`; counts down when the
/// end is below the start.
fn seq(args: &Args<'_>) -> Result<GoValue, TemplateError> {
    let params = (0..args.len()).map(|i| args.int(i)).collect::<Result<Vec<_>, _>>()?;
    let values = match params[..] {
        [end] => {
            let step = if end < 1 { -1 } else { 1 };
            until_step(args, 1, end.saturating_add(step), step)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_step(args, start, end.saturating_add(step), step)?
        }
        [start, step, end] => {
            let increment = if end < start { -1 } else { 1 };
            if end < start && step > 0 {
                Vec::new()
            } else {
                until_step(args, start, end.saturating_add(increment), step)?
            }
        }
        _ => Vec::new(),
    };
    Ok(go::string(values.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")))
}

/// Folds the operands (as `cast.ToFloat64` reads them) in decimal, as Sprig's `execDecimalOp`.
fn decimal(args: &Args<'_>, operands: &[GoValue], op: fn(Dec, Dec) -> Option<Dec>) -> Result<GoValue, TemplateError> {
    let mut floats = operands.iter().map(to_f64);
    let first = floats.next().unwrap_or(0.0);
    let Some(mut acc) = Dec::from_f64(first) else { return Err(nan(args, first)) };
    let mut fallback = first;
    let mut exact = true;
    for x in floats {
        let Some(d) = Dec::from_f64(x) else { return Err(nan(args, x)) };
        if args.name() == "divf" && x == 0.0 {
            return Err(go::fail(args.name(), "decimal division by zero"));
        }
        fallback = match args.name() {
            "subf" => fallback - x,
            "mulf" => fallback * x,
            "divf" => fallback / x,
            _ => fallback + x,
        };
        if exact {
            match op(acc, d) {
                Some(next) => acc = next,
                None => exact = false,
            }
        }
    }
    Ok(GoValue::Float(if exact { acc.to_f64() } else { fallback }))
}

fn nan(args: &Args<'_>, value: f64) -> TemplateError {
    go::fail(args.name(), format!("Cannot create a Decimal from {}", go::go_float(value)))
}

/// A decimal `m × 10^e`, enough for Sprig's float arithmetic; operations that would overflow
/// return `None` and the caller falls back to binary floats.
#[derive(Clone, Copy, Debug)]
struct Dec {
    m: i128,
    e: i32,
}

impl Dec {
    /// The shortest decimal that reads back as `f` (shopspring's `NewFromFloat`).
    fn from_f64(f: f64) -> Option<Dec> {
        if !f.is_finite() {
            return None;
        }
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e')?;
        let exponent: i32 = exponent.parse().ok()?;
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let m: i128 = format!("{whole}{fraction}").parse().ok()?;
        Some(Dec { m, e: exponent - fraction.len() as i32 })
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.m, self.e).parse().unwrap_or(f64::NAN)
    }

    /// Both with the smaller exponent.
    fn align(a: Dec, b: Dec) -> Option<(i128, i128, i32)> {
        let e = a.e.min(b.e);
        let scale = |d: Dec| 10i128.checked_pow(u32::try_from(d.e - e).ok()?).and_then(|p| d.m.checked_mul(p));
        Some((scale(a)?, scale(b)?, e))
    }

    fn add(a: Dec, b: Dec) -> Option<Dec> {
        let (x, y, e) = Dec::align(a, b)?;
        Some(Dec { m: x.checked_add(y)?, e })
    }

    fn sub(a: Dec, b: Dec) -> Option<Dec> {
        let (x, y, e) = Dec::align(a, b)?;
        Some(Dec { m: x.checked_sub(y)?, e })
    }

    fn mul(a: Dec, b: Dec) -> Option<Dec> {
        Some(Dec { m: a.m.checked_mul(b.m)?, e: a.e.checked_add(b.e)? })
    }

    /// Division to 16 decimal places, half away from zero (shopspring's `Div`).
    fn div(a: Dec, b: Dec) -> Option<Dec> {
        if b.m == 0 {
            return None;
        }
        // a/b = (a.m / b.m) × 10^(a.e - b.e); we want the quotient × 10^16 as an integer.
        let shift = 16 + a.e - b.e;
        let (numerator, denominator) = if shift >= 0 {
            (a.m.checked_mul(10i128.checked_pow(shift as u32)?)?, b.m)
        } else {
            (a.m, b.m.checked_mul(10i128.checked_pow((-shift) as u32)?)?)
        };
        let (q, r) = (numerator / denominator, numerator % denominator);
        let away = r.checked_mul(2)?.unsigned_abs() >= denominator.unsigned_abs();
        let sign = if (numerator < 0) != (denominator < 0) { -1 } else { 1 };
        Some(Dec { m: if away { q.checked_add(sign)? } else { q }, e: -16 })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{expect, expect_err};

    #[test]
    fn sprig_math() {
        // numeric_test.go: TestUntil, TestUntilStep, TestBiggest, TestMaxf, TestMinf, TestToFloat64,
        // TestToInt64, TestToInt, TestToDecimal, TestAdd, TestMul, TestDiv, TestMod, TestSeq,
        // TestRound, TestFloor, TestCeil, TestAddf, TestSubf, TestMulf, TestDivf.
        expect(&[
            (r#"{{range $i, $e := until 5}}{{$i}}{{$e}}{{end}}"#, "0011223344"),
            (r#"{{range $i, $e := until -5}}{{$i}}{{$e}} {{end}}"#, "00 1-1 2-2 3-3 4-4 "),
            (r#"{{range $i, $e := untilStep 0 5 1}}{{$i}}{{$e}}{{end}}"#, "0011223344"),
            (r#"{{range $i, $e := untilStep 3 6 1}}{{$i}}{{$e}}{{end}}"#, "031425"),
            (r#"{{range $i, $e := untilStep 0 -10 -2}}{{$i}}{{$e}} {{end}}"#, "00 1-2 2-4 3-6 4-8 "),
            (r#"{{range $i, $e := untilStep 3 0 1}}{{$i}}{{$e}}{{end}}"#, ""),
            (r#"{{range $i, $e := untilStep 3 99 0}}{{$i}}{{$e}}{{end}}"#, ""),
            (r#"{{ biggest 1 2 3 345 5 6 7}}{{ max 345}}{{ max 1 "5" 3.9 }}"#, "3453455"),
            (r#"{{ maxf 1 2 3 345.7 5 6 7}} {{ minf 1.5 -2 3 }} {{ min 1 2 3 345 5 6 7}}"#, "345.7 -2 1"),
            (r#"{{ float64 "102" }} {{ float64 "1.5" }} {{ float64 true }} {{ float64 .Nothing }}"#, "102 1.5 1 0"),
            (
                r#"{{ int64 "102" }} {{ int64 102.9 }} {{ int64 "0x10" }} {{ int64 "010" }} {{ int64 "10.00" }} {{ int64 "x" }}"#,
                "102 102 16 8 10 0",
            ),
            (r#"{{ int "102" }} {{ int true }} {{ atoi "42" }} {{ atoi "x" }}"#, "102 1 42 0"),
            (r#"{{ toDecimal 777 }} {{ toDecimal "0777" }} {{ toDecimal "x" }}"#, "511 511 0"),
            (
                r#"{{ add 1 2 3 }} {{ add1 "2" }} {{ sub 3 2 }} {{ mul 1 2 3 }} {{ div 10 3 }} {{ mod 10 3 }}"#,
                "6 3 1 6 3 1",
            ),
            (
                r#"{{ seq 1 2 3 }}|{{ seq 3 -3 2 }}|{{ seq 0 4 10 }}|{{ seq -3 }}|{{ seq 0 }}|{{ seq 0 1 2 3 }}|{{ seq 5 }}|{{ seq 2 -2 }}"#,
                "1 3|3|0 4 8|1 0 -1 -2 -3|1 0||1 2 3 4 5|2 1 0 -1 -2",
            ),
            (
                r#"{{ round 3.746 2 }} {{ round 3.746 2 0.5 }} {{ round 123.5555 3 }} {{ round 123.5555 2 0.3 }}"#,
                "3.75 3.75 123.556 123.56",
            ),
            (
                r#"{{ round 123.500001 0 }} {{ round 123.49999999 0 }} {{ round 123.2329999 2 0.3 }} {{ round "123.55555" 3 }}"#,
                "124 123 123.23 123.556",
            ),
            (r#"{{ floor 1.5 }} {{ floor "-1.5" }} {{ ceil 1.5 }} {{ ceil "2" }}"#, "1 -2 2 2"),
            (
                r#"{{ addf 1 2 }} {{ addf 0.1 0.2 }} {{ add1f 1.5 }} {{ subf 1.5 2 2 }} {{ mulf 1.5 2 2 }} {{ divf 10 4 2 }}"#,
                "3 0.3 2.5 -2.5 6 1.25",
            ),
            (r#"{{ divf 0.3 0.1 }} {{ divf 1 3 }}"#, "3 0.3333333333333333"),
        ]);
        expect_err(&[
            (r#"{{ div 1 0 }}"#, "error calling div: runtime error: integer divide by zero"),
            (r#"{{ mod 1 "0" }}"#, "integer divide by zero"),
            (r#"{{ until 100000000 }}"#, "more than the"),
            (r#"{{ round 1.5 }}"#, "want at least 2 got 1"),
            (r#"{{ divf 1 0 }}"#, "decimal division by zero"),
        ]);
    }
}
