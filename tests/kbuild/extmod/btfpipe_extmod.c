// SPDX-License-Identifier: GPL-2.0
/* btfpipe_extmod.c: an out-of-tree module (make M=...) for make check-kbuild.
 * Its types are its own (a struct of its own, one that embeds and points at
 * kernel types) and the kernel's (struct list_head, struct file): its split
 * BTF must refer to the vmlinux BTF for those, and the kernel checks it at
 * insmod. It has a kfunc: pahole tags it "bpf_kfunc" (decl_tag_kfuncs),
 * and at insmod register_btf_kfunc_id_set() finds its FUNC in the module's
 * BTF by the id resolve_btfids wrote and checks its prototype; the module
 * does not load unless that holds. */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/fs.h>

struct btfpipe_item {
	struct list_head node;
	struct file *owner;
	unsigned int weight : 12;
	unsigned int flags : 4;
	char tag[8];
	union {
		long sum;
		void *cookie;
	};
};

static LIST_HEAD(btfpipe_items);
struct btfpipe_item btfpipe_first = { .weight = 3, .tag = "first" };

noinline int btfpipe_weigh(struct btfpipe_item *it, int scale)
{
	return it->weight * scale + it->flags;
}
EXPORT_SYMBOL_GPL(btfpipe_weigh);

__bpf_kfunc_start_defs();

__bpf_kfunc int btfpipe_kfunc_weigh(struct btfpipe_item *it, int scale)
{
	return it ? btfpipe_weigh(it, scale) : 0;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(btfpipe_kfunc_ids)
BTF_ID_FLAGS(func, btfpipe_kfunc_weigh)
BTF_KFUNCS_END(btfpipe_kfunc_ids)

static const struct btf_kfunc_id_set btfpipe_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &btfpipe_kfunc_ids,
};

static int __init btfpipe_init(void)
{
	int err = register_btf_kfunc_id_set(BPF_PROG_TYPE_TRACING, &btfpipe_kfunc_set);

	if (err) {
		pr_err("btfpipe_extmod: register_btf_kfunc_id_set: %d\n", err);
		return err;
	}
	list_add(&btfpipe_first.node, &btfpipe_items);
	pr_info("btfpipe_extmod: loaded, weight %d\n", btfpipe_weigh(&btfpipe_first, 2));
	return 0;
}

static void __exit btfpipe_exit(void)
{
	list_del(&btfpipe_first.node);
}

module_init(btfpipe_init);
module_exit(btfpipe_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("btfpipe's out-of-tree test module");
