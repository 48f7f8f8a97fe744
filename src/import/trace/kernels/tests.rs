use super::*;
use crate::import::trace::CompileId;

const CODE: &str = r#"from torch._inductor.select_algorithm import extern_kernels
async_compile = AsyncCompile()

# kernel path: /tmp/torchinductor_root/6b/c6b.py
# Topologically Sorted Source Nodes: [h], Original ATen: [aten.native_layer_norm]
# Source node to ATen node mapping:
#   h => add, add_1, var_mean
# Graph fragment:
#   %arg2_1 : Tensor "f32[s77, 32]" = PlaceHolder[target=arg2_1]
#   %var_mean : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%arg2_1, [2]), kwargs = {})
#   return %add_1
triton_per_fused_native_layer_norm_0 = async_compile.triton('triton_per_fused_native_layer_norm_0', '''
import triton

@triton.jit
def triton_per_fused_native_layer_norm_0(in_ptr0, out_ptr2, xnumel):
    x = tl.load(in_ptr0)
''', device_str='cuda')

async_compile.wait(globals())

class Runner:
    def call(self, args):
        arg0_1, arg1_1 = args
        with torch.cuda._DeviceGuard(0):
            # Topologically Sorted Source Nodes: [h], Original ATen: [aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_native_layer_norm_0.run(arg0_1, buf3, 32, stream=stream0)
            # Topologically Sorted Source Nodes: [h, linear], Original ATen: [aten.addmm]
            extern_kernels.addmm(arg6_1, buf3, arg5_1, alpha=1, beta=1, out=buf4)
            # Topologically Sorted Source Nodes: [linear_1], Original ATen: [aten.mm]
            extern_kernels.mm(buf4, arg7_1, out=buf10)
            # Topologically Sorted Source Nodes: [a], Original ATen: [aten._scaled_dot_product_efficient_attention]
            buf5 = torch.ops.aten._scaled_dot_product_efficient_attention.default(buf4, buf4, buf4, None, True)
            triton_per_fused_native_layer_norm_0.run(buf5, buf6, 32, stream=stream0)
        return (buf6, )

def benchmark_compiled_module(args, times=10, repeat=10):
    fn = lambda: call(list(args))
"#;

fn record(code: &str) -> CompileRecord {
    CompileRecord {
        id: CompileId::default(),
        output_code: vec![OutputCode { filename: Some("/nowhere/x.py".into()), code: code.into() }],
        ..CompileRecord::default()
    }
}

#[test]
fn reads_kernels_sources_nodes_and_launch_order_from_comments() {
    let t = &kernels(&record(CODE), &FileAccess::nothing())[0];
    let names: Vec<&str> = t.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "triton_per_fused_native_layer_norm_0",
            "extern_kernels.addmm#1",
            "extern_kernels.mm#1",
            "aten._scaled_dot_product_efficient_attention.default#1"
        ]
    );
    let ln = &t.kernels[0];
    assert_eq!(ln.kind, KernelKind::Triton);
    assert!(matches!(&ln.source, KernelSource::Code { language, text } if language == "triton" && text.contains("@triton.jit")));
    assert_eq!(ln.nodes, ["h"]);
    assert_eq!(ln.post_grad_nodes, ["add", "add_1", "var_mean"]);
    assert_eq!(ln.call_sites, 2);
    assert_eq!(ln.profiler_op().as_deref(), Some("triton_per_fused_native_layer_norm_0"));
    assert_eq!(t.kernels[1].nodes, ["h", "linear"]);
    assert_eq!(t.kernels[1].profiler_op().as_deref(), Some("aten::addmm"));
    assert_eq!(t.kernels[3].kind, KernelKind::Fallback);
    assert_eq!(t.kernels[3].profiler_op().as_deref(), Some("aten::_scaled_dot_product_efficient_attention"));
    let order: Vec<usize> = t.launches.iter().map(|l| l.kernel).collect();
    assert_eq!(order, [0, 1, 2, 3, 0]);
    assert!(t.notes.is_empty(), "{:?}", t.notes);
}

#[test]
fn provenance_mappings_name_post_grad_and_original_nodes() {
    let code = CODE.replace(
        "            extern_kernels.mm(buf4",
        "            # [Provenance debug handles] extern_kernels.mm:3\n            extern_kernels.mm(buf4",
    );
    let mut rec = record(&code);
    let j = serde_json::json!({
        "cppCodeToPost": { "extern_kernels.mm:3": ["mm_1"] },
        "postToPre": { "mm_1": ["linear_1"] },
        "version": 2.0
    });
    rec.provenance = Some(NodeMappings::from_json(&j));
    let t = &kernels(&rec, &FileAccess::nothing())[0];
    let mm = t.kernels.iter().find(|k| k.callee == "extern_kernels.mm").unwrap();
    assert_eq!(mm.name, "extern_kernels.mm:3");
    assert_eq!(mm.post_grad_nodes, ["mm_1"]);
    assert_eq!(mm.nodes, ["linear_1"]);
}

#[test]
fn cut_or_garbled_output_code_does_not_panic() {
    for end in (0..CODE.len()).step_by(5) {
        let _ = kernels(&record(&CODE[..end]), &FileAccess::nothing());
    }
    let garbled = CODE.replace("'''", "").replace('(', "((").replace("debug handles]", "debug handles] x:");
    let _ = kernels(&record(&garbled), &FileAccess::nothing());
}

#[test]
fn a_path_without_code_is_said_so() {
    let t = &kernels(&record(""), &FileAccess::nothing())[0];
    assert!(t.kernels.is_empty());
    assert!(matches!(&t.named_file, Some(NamedFile::Skipped { path, .. }) if path == "/nowhere/x.py"), "{:?}", t.named_file);
    assert!(t.notes[0].contains("/nowhere/x.py") && t.notes[0].contains("not on this machine"), "{:?}", t.notes);
}

#[test]
fn definitions_and_launches_are_read_as_python_statements() {
    let code = CODE
        .replace(
            "            extern_kernels.mm(buf4, arg7_1, out=buf10)",
            "            extern_kernels.mm(buf4,\n                arg7_1, out=buf10);  del buf4  # reuse",
        )
        .replace("run(buf5, buf6, 32, stream=stream0)", "run(*[buf5, buf6], 32, stream=stream0)")
        // A definition inside a kernel's source string is text, not a kernel.
        .replace("import triton\n", "import triton\nfake = async_compile.triton('fake', 'x')\n");
    let t = &kernels(&record(&code), &FileAccess::nothing())[0];
    let names: Vec<&str> = t.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names[0], "triton_per_fused_native_layer_norm_0");
    assert!(!names.contains(&"fake"), "{names:?}");
    let order: Vec<usize> = t.launches.iter().map(|l| l.kernel).collect();
    assert_eq!(order, [0, 1, 2, 3, 0]);
    assert!(matches!(&t.kernels[0].source, KernelSource::Code { text, .. } if text.starts_with("import triton\nfake =")));
    // A log cut off inside the source keeps what it has of it.
    let cut = &CODE[..CODE.find("    x = tl.load").unwrap()];
    let t = &kernels(&record(cut), &FileAccess::nothing())[0];
    assert!(matches!(&t.kernels[0].source, KernelSource::Code { text, .. } if text.ends_with("def triton_per_fused_native_layer_norm_0(in_ptr0, out_ptr2, xnumel):")), "{:?}", t.kernels[0].source);
}
