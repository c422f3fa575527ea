//! Windsor v0.9's `cidrhost`, `cidrsubnet`, `cidrsubnets` and `cidrnetmask`
//! (pkg/runtime/evaluator/evaluator.go), with its messages, on one prefix reader. They are Windsor's, not Terraform's:
//! `cidrsubnets` places each subnet right after the previous one, without aligning it to its
//! own size (`cidrsubnets("10.0.0.0/8", 4, 8)` is `10.0.0.0/12`, `10.16.0.0/16`). Addresses
//! count from the network address (`10.5.3.7/16` is `10.5.0.0/16`), as Go's `ParseCIDR` gives it.

use super::arity::Arity;
use super::value::{num, type_name, Num};
use crate::doc::Value;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

type Result<T> = std::result::Result<T, String>;

/// A parsed prefix: the address as written (Go's `ParseCIDR` gives the network address, the
/// address with its host bits cleared), its prefix length and the address width.
struct Prefix {
    network: u128,
    ones: u32,
    width: u32,
    v4: bool,
}

fn parse(prefix: &str) -> Result<Prefix> {
    let invalid = || format!("invalid CIDR prefix: invalid CIDR address: {prefix}");
    let (address, bits) = prefix.split_once('/').ok_or_else(invalid)?;
    let address: IpAddr = address.parse().map_err(|_| invalid())?;
    let width: u32 = if address.is_ipv4() { 32 } else { 128 };
    let ones: u32 = bits.parse().ok().filter(|b| *b <= width).ok_or_else(invalid)?;
    let host_bits = width - ones;
    let host_mask: u128 = if host_bits >= 128 { u128::MAX } else { (1u128 << host_bits) - 1 };
    let (value, v4) = match address {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), true),
        IpAddr::V6(v6) => (u128::from(v6), false),
    };
    Ok(Prefix { network: value & !host_mask, ones, width, v4 })
}

fn text(address: u128, v4: bool) -> String {
    match u32::try_from(address) {
        Ok(v) if v4 => Ipv4Addr::from(v).to_string(),
        _ => Ipv6Addr::from(address).to_string(),
    }
}

/// Go's `int` conversion of a number argument, as Windsor's helpers take ints or floats.
fn integer(name: &str, which: &str, value: &Value) -> Result<i128> {
    match num(value) {
        Some(Num::Int(i)) => Ok(i.into()),
        Some(Num::Float(f)) => Ok(f.trunc() as i128),
        None => Err(format!("{name}() {which} must be a number, got {}", type_name(value))),
    }
}

/// The address `offset` past the network, or Windsor's error when it leaves the address space.
fn advance(p: &Prefix, offset: u128, prefix: &str) -> Result<u128> {
    let limit: u128 = if p.v4 { u128::from(u32::MAX) } else { u128::MAX };
    match p.network.checked_add(offset) {
        Some(address) if address <= limit => Ok(address),
        _ if p.v4 => Err(format!("offset {offset} causes overflow for CIDR {prefix}")),
        _ => Err(format!("offset {offset} is too large for CIDR {prefix}")),
    }
}

fn subnet_size(p: &Prefix, newbits: i128, prefix: &str, label: &str) -> Result<(u32, u128)> {
    let ones = i128::from(p.ones);
    if newbits < 0 || ones + newbits > i128::from(p.width) {
        return Err(format!(
            "{label}={newbits} is invalid for CIDR {prefix} (prefix length {}, total bits {})",
            p.ones, p.width
        ));
    }
    let length = (ones + newbits) as u32;
    let host_bits = p.width - length;
    let size = if host_bits >= 128 { 0 } else { 1u128 << host_bits };
    Ok((length, size))
}

/// `name` called with `args`; its `arity` is counted after the prefix's type, as Windsor's
/// helpers do.
pub(super) fn call<'v>(name: &str, arity: Arity, args: impl Iterator<Item = &'v Value>) -> Result<Value> {
    let count = |n: usize| if arity.admits(n) { Ok(()) } else { Err(arity.windsor_message(name, n)) };
    let args: Vec<&Value> = args.collect();
    let prefix = match args.first() {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            let which = if name == "cidrnetmask" { "argument" } else { "first argument" };
            return Err(format!("{name}() {which} must be a string, got {}", type_name(other)));
        }
        None => "",
    };
    match name {
        // The `n`th address of the network (`cidrhost("10.5.0.0/16", 10)` is `10.5.0.10`),
        // refused when it falls outside it.
        "cidrhost" => {
            let n = integer(name, "second argument", args.get(1).copied().unwrap_or(&Value::Null))?;
            let p = parse(prefix)?;
            if n < 0 {
                return Err(format!("host number {n} is out of range (must be non-negative) for CIDR {prefix}"));
            }
            let host_bits = p.width - p.ones;
            let mask: u128 = if host_bits >= 128 { u128::MAX } else { (1u128 << host_bits) - 1 };
            if (n as u128) > mask {
                return Err(if p.v4 {
                    format!("host number {n} is out of range (0-{mask}) for CIDR {prefix}")
                } else {
                    format!("host number {n} is too large for CIDR {prefix}")
                });
            }
            Ok(Value::String(text(p.network + n as u128, p.v4)))
        }
        "cidrsubnet" => {
            count(args.len())?;
            let p = parse(prefix)?;
            let newbits = integer(name, "second argument", args[1])?;
            let netnum = integer(name, "third argument", args[2])?;
            if newbits < 0 || i128::from(p.ones) + newbits > i128::from(p.width) {
                return Err(format!(
                    "newbits {newbits} is invalid for CIDR {prefix} (prefix length {}, total bits {})",
                    p.ones, p.width
                ));
            }
            if netnum < 0 {
                return Err(format!("netnum {netnum} is out of range (must be non-negative) for newbits {newbits}"));
            }
            let (length, size) = subnet_size(&p, newbits, prefix, "newbits")?;
            // Windsor checks the range for IPv4 only; an IPv6 netnum past it moves on into the
            // next addresses.
            if p.v4 && newbits < 64 && netnum >= (1i128 << newbits) {
                let max = (1i128 << newbits) - 1;
                return Err(format!("netnum {netnum} is out of range (0-{max}) for newbits {newbits}"));
            }
            let offset =
                (netnum as u128).checked_mul(size).ok_or_else(|| format!("offset for netnum {netnum} is too large"))?;
            let address = advance(&p, offset, prefix)?;
            Ok(Value::String(format!("{}/{length}", text(address, p.v4))))
        }
        "cidrsubnets" => {
            count(args.len())?;
            let p = parse(prefix)?;
            let mut offset: u128 = 0;
            let mut out = Vec::with_capacity(args.len() - 1);
            for (i, arg) in args[1..].iter().enumerate() {
                let newbits = integer(name, &format!("argument {}", i + 2), arg)?;
                let (length, size) = subnet_size(&p, newbits, prefix, &format!("newbits[{i}]"))?;
                let address = advance(&p, offset, prefix)?;
                out.push(Value::String(format!("{}/{length}", text(address, p.v4))));
                offset = offset.saturating_add(size);
            }
            Ok(Value::Array(out))
        }
        _ => {
            count(args.len())?;
            let p = parse(prefix)?;
            if !p.v4 {
                return Err("CIDR prefix must be IPv4, got IPv6".into());
            }
            let mask = if p.ones == 0 { 0 } else { u32::MAX << (32 - p.ones) };
            Ok(Value::String(Ipv4Addr::from(mask).to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, args: Value) -> Result<Value> {
        let Value::Array(args) = args else { return Err("args".into()) };
        let row = crate::expr::builtins::TABLE.iter().find(|row| row.name == name).ok_or("no such builtin")?;
        call(name, row.arity, args.iter())
    }

    /// windsorcli/cli v0.9.0 (commit a5d0ededa7dc, MPL-2.0)
    /// pkg/runtime/evaluator/evaluator_helpers_test.go: the cidrsubnet, cidrsubnets and
    /// cidrnetmask cases with exact results, and the errors of its error cases.
    #[test]
    fn windsor_cidr_functions() {
        assert_eq!(run("cidrsubnet", json!(["10.5.0.0/16", 8, 1])), Ok(json!("10.5.1.0/24")));
        assert_eq!(run("cidrsubnet", json!(["10.0.0.0/8", 8, 0])), Ok(json!("10.0.0.0/16")));
        assert_eq!(run("cidrsubnet", json!(["10.5.3.7/16", 8, 1])), Ok(json!("10.5.1.0/24")));
        assert_eq!(run("cidrsubnet", json!(["2001:db8::/64", 16, 256])), Ok(json!("2001:db8:0:0:100::/80")));
        assert_eq!(run("cidrsubnet", json!(["2001:db8::/32", 64, 0])), Ok(json!("2001:db8::/96")));
        assert_eq!(run("cidrsubnets", json!(["10.5.0.0/16", 8, 8])), Ok(json!(["10.5.0.0/24", "10.5.1.0/24"])));
        assert_eq!(run("cidrsubnets", json!(["10.0.0.0/8", 8])), Ok(json!(["10.0.0.0/16"])));
        assert_eq!(run("cidrsubnets", json!(["10.0.0.0/8", 4, 8])), Ok(json!(["10.0.0.0/12", "10.16.0.0/16"])));
        assert_eq!(run("cidrsubnets", json!(["10.5.3.7/16", 8, 8])), Ok(json!(["10.5.0.0/24", "10.5.1.0/24"])));
        assert_eq!(run("cidrnetmask", json!(["10.5.0.0/16"])), Ok(json!("255.255.0.0")));
        assert_eq!(run("cidrnetmask", json!(["192.168.1.0/24"])), Ok(json!("255.255.255.0")));
        assert_eq!(run("cidrnetmask", json!(["10.0.0.0/8"])), Ok(json!("255.0.0.0")));
        for (name, args) in [
            ("cidrsubnet", json!(["10.5.0.0/16", 8])),
            ("cidrsubnet", json!([42, 8, 1])),
            ("cidrsubnet", json!(["10.5.0.0/16", "8", 1])),
            ("cidrsubnet", json!(["invalid", 8, 1])),
            ("cidrsubnet", json!(["10.5.0.0/16", 17, 1])),
            ("cidrsubnet", json!(["10.5.0.0/16", 8, 256])),
            ("cidrsubnet", json!(["0.0.0.0/0", 0, 1])),
            ("cidrsubnet", json!(["255.255.255.0/24", 0, 1])),
            ("cidrsubnet", json!(["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120", 0, 1])),
            ("cidrsubnets", json!(["10.5.0.0/16"])),
            ("cidrsubnets", json!([42, 8])),
            ("cidrsubnets", json!(["10.5.0.0/16", "8"])),
            ("cidrsubnets", json!(["invalid", 8])),
            ("cidrsubnets", json!(["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120", 0, 0])),
            ("cidrnetmask", json!(["10.5.0.0/16", "extra"])),
            ("cidrnetmask", json!([42])),
            ("cidrnetmask", json!(["invalid"])),
        ] {
            assert!(run(name, args.clone()).is_err(), "{name} {args}");
        }
        assert_eq!(
            run("cidrsubnet", json!(["10.5.0.0/16", 8, 256])),
            Err("netnum 256 is out of range (0-255) for newbits 8".into())
        );
    }
}
